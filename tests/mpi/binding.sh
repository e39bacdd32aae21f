#!/usr/bin/env bash
# Plain mpirun (not scripts/mpirun, which passes --bind-to none) binds each of one or two ranks
# to one core by default; r1pi must widen every thread of each rank to the CPUs this shell may
# use, say so once, and still print scripts/mpirun's sha256. A binding the user chose stays: more
# -t threads than it leaves is an error naming --bind-to none, and without -t the rank runs on
# what it has. Needs 2 CPUs (a binding to one core is then narrower than the machine).
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d)
mpirun_pid=""
cleanup() {
  [ -z "$mpirun_pid" ] || kill -TERM "$mpirun_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
own_cpus=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
if [ "$(nproc)" -lt 2 ]; then
  echo "PASS: $TEST_NAME: skipped, $(nproc) CPU here (a binding cannot be narrower than the machine)"
  exit 0
fi
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --mca pml ob1 --mca mpi_yield_when_idle 1)
bounded=(timeout -s KILL 120 "${mpi[@]}")  # a job that must end by itself
model=$R1PI_MPI_MODELS/tiny.gguf
prompt=(-m "$model" -p "Once upon a time" -n 16 --temp 0)

# A server on NP ranks under plain mpirun: every thread of every rank may use the shell's CPUs.
widened_server() {
  local np=$1 log=$work/serve-np$1.log port="" pids
  "${mpi[@]}" -np "$np" "$R1PI" -m "$model" --serve --port 0 -t 2 >"$log" 2>&1 &
  mpirun_pid=$!
  for _ in $(seq 1 600); do
    port=$(sed -n 's|^serve: listening on http://[^:]*:\([0-9]*\) .*|\1|p' "$log")
    [ -n "$port" ] || ! kill -0 "$mpirun_pid" 2>/dev/null || { sleep 0.1; continue; }
    break
  done
  [ -n "$port" ] || { fail "np $np: the server did not start"; show "$log"; return; }
  pids=$(pgrep -P "$mpirun_pid" -x r1pi || true)
  [ "$(echo "$pids" | wc -w)" -eq "$np" ] || fail "np $np: $(echo "$pids" | wc -w) r1pi processes under mpirun"
  local narrow=0 threads=0
  for pid in $pids; do
    for status in /proc/"$pid"/task/*/status; do
      threads=$((threads + 1))
      [ "$(sed -n 's/^Cpus_allowed_list:\s*//p' "$status")" = "$own_cpus" ] || narrow=$((narrow + 1))
    done
  done
  if [ "$narrow" -eq 0 ] && [ "$threads" -gt "$np" ]; then
    pass "np $np, Open MPI's default binding: all $threads threads of the $np ranks on CPUs $own_cpus"
  else
    fail "np $np: $narrow of $threads threads bound narrower than CPUs $own_cpus"
  fi
  [ "$(grep -c '^note: mpirun bound this rank to 1 of ' "$log")" -eq 1 ] || { fail "np $np: not one note from rank 0"; show "$log"; }
  kill -TERM "$mpirun_pid"
  wait "$mpirun_pid" 2>/dev/null || true
  mpirun_pid=""
}
widened_server 1
widened_server 2

# The same tokens as scripts/mpirun's run.
job 1 "$work/wrapper.log" "$R1PI" "${prompt[@]}" -t 2
reference=$(sha_of "$work/wrapper.log")
rc=0
"${bounded[@]}" -np 1 "$R1PI" "${prompt[@]}" -t 2 >"$work/plain.log" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ -n "$reference" ] && [ "$(sha_of "$work/plain.log")" = "$reference" ]; then
  pass "plain mpirun -np 1 -t 2 prints scripts/mpirun's sha256"
else
  fail "plain mpirun -np 1: exit $rc, sha '$(sha_of "$work/plain.log")', scripts/mpirun's '$reference'"
  show "$work/plain.log"
fi

# --bind-to core chosen by the user: -t 2 on one core is refused on every rank count, without it the run goes on.
for np in 1 2; do
  rc=0
  "${bounded[@]}" -np "$np" --bind-to core "$R1PI" "${prompt[@]}" -t 2 >"$work/bound-t2.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && grep -q -- "error: .*-t 2 threads on a rank that mpirun --bind-to core bound to 1 CPU: .*--bind-to none (scripts/mpirun does), or give -t 1" "$work/bound-t2.log"; then
    pass "np $np, --bind-to core -t 2: exit $rc with the fix named"
  else
    fail "np $np, --bind-to core -t 2: exit $rc"
    show "$work/bound-t2.log"
  fi
done
rc=0
"${bounded[@]}" -np 1 --bind-to core "$R1PI" "${prompt[@]}" >"$work/bound.log" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ "$(sha_of "$work/bound.log")" = "$reference" ] && ! grep -q "^note: mpirun bound" "$work/bound.log"; then
  pass "--bind-to core without -t: runs on its core, no note, the same sha256"
else
  fail "--bind-to core without -t: exit $rc"
  show "$work/bound.log"
fi
finish
