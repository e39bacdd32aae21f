#!/usr/bin/env bash
# wrapper.sh: scripts/mpirun picks the documented defaults (checked with --dry-run), passes the
# program's arguments through unchanged, and really starts a small job.
set -euo pipefail
: "${R1PI_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
w=$R1PI_SOURCE_DIR/scripts/mpirun
cores=$(nproc)
failures=0
check() {  # check DESCRIPTION OUTPUT (present|absent) PATTERN
  local what=$1 out=$2 mode=$3 pattern=$4 found=0
  grep -qF -- "$pattern" <<<"$out" && found=1
  if { [ "$mode" = present ] && [ $found -eq 1 ]; } || { [ "$mode" = absent ] && [ $found -eq 0 ]; }; then
    echo "PASS: mpi wrapper: $what"
  else
    echo "FAIL: mpi wrapper: $what: '$pattern' $mode? in: $out"
    failures=$((failures + 1))
  fi
}

out=$("$w" --dry-run -np $((cores + 1)) build/r1pi -m m.gguf -p "Once upon a time" -t 1)
check "more ranks than cores: --oversubscribe" "$out" present "--oversubscribe"
check "more ranks than cores: yield when idle" "$out" present "--mca mpi_yield_when_idle 1"
check "-np passed" "$out" present "-np $((cores + 1)) "
check "binding off by default" "$out" present "--bind-to none"
check "one machine: shared memory without probing networks" "$out" present "--mca pml ob1"
check "one machine: a session folder of the job's own" "$out" present "--mca orte_tmpdir_base ${TMPDIR:-/tmp}/r1pi-mpirun-"
check "program arguments unchanged" "$out" present 'build/r1pi -m m.gguf -p Once\ upon\ a\ time -t 1'

out=$("$w" --dry-run -np 1 build/r1pi -m m.gguf -t 1)
check "one single-threaded rank: no --oversubscribe" "$out" absent "--oversubscribe"
check "one single-threaded rank: no yield" "$out" absent "mpi_yield_when_idle"

if [ "$cores" -ge 2 ]; then
  out=$("$w" --dry-run -np 2 build/r1pi -m m.gguf)  # r1pi's default: every core per rank
  check "ranks x default threads over the cores: yield" "$out" present "--mca mpi_yield_when_idle 1"
  check "ranks within the cores: no --oversubscribe" "$out" absent "--oversubscribe"
  out=$("$w" --dry-run -np 2 build/r1pi -m m.gguf --threads=$((cores / 2)))
  check "--threads=N counted" "$out" absent "mpi_yield_when_idle"
fi

hostfile=$(mktemp)
trap 'rm -f "$hostfile"' EXIT
printf 'pi0 slots=1\npi1 slots=1\n' >"$hostfile"
out=$(R1PI_BACKEND=scalar "$w" --dry-run --hostfile "$hostfile" ./r1pi -m m.gguf)
check "hostfile: one rank per node" "$out" present "--hostfile $hostfile --map-by ppr:1:node"
check "hostfile: -np left to the hosts" "$out" absent "-np"
check "hostfile: Open MPI picks the network" "$out" absent "pml"
check "hostfile: Open MPI's own session folder" "$out" absent "orte_tmpdir_base"
check "R1PI_* variables exported to the ranks" "$out" present "-x R1PI_BACKEND"
out=$("$w" --dry-run --hostfile "$hostfile" --bind-to core --map-by node -- ./r1pi -m m.gguf)
check "explicit --bind-to kept" "$out" present "--bind-to core"
check "explicit --bind-to: no default" "$out" absent "--bind-to none"
check "explicit --map-by: no ppr default" "$out" absent "ppr:1:node"
out=$("$w" --dry-run -np 2 --mca btl tcp,self --npernode 1 -- ./r1pi -m m.gguf)
check "options before -- go to mpirun" "$out" present '--npernode 1 ./r1pi -m m.gguf'
out=$("$w" --dry-run -np 2 --mca pml ucx -- ./r1pi -m m.gguf)
check "a pml given is kept" "$out" absent "pml ob1"
if [ "$(id -u)" -eq 0 ]; then
  check "root: run-as-root allowed" "$out" present "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
fi

status=0
"$w" --dry-run build/r1pi -m m.gguf >/dev/null 2>&1 || status=$?
[ $status -eq 2 ] && echo "PASS: mpi wrapper: no -np and no hostfile refused" \
  || { echo "FAIL: mpi wrapper: no -np and no hostfile gave status $status"; failures=$((failures + 1)); }

# A real job: two ranks, each sees its rank and the exported R1PI_* variable.
out=$(R1PI_WRAPPER_TEST=yes timeout -s KILL 60 "$w" -np 2 -- \
  bash -c 'echo "rank=$OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE var=$R1PI_WRAPPER_TEST"' | sort)
check "a real 2-rank job: rank 0" "$out" present "rank=0 of 2 var=yes"
check "a real 2-rank job: rank 1" "$out" present "rank=1 of 2 var=yes"

[ $failures -eq 0 ] && { echo "PASS: mpi wrapper (all checks)"; exit 0; }
echo "FAIL: mpi wrapper: $failures check(s) failed"
exit 1
