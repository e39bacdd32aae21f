#!/usr/bin/env bash
# faults.sh CASE: a multi-rank job that cannot go on ends with a clear message and a non-zero exit,
# never a hang. CASE:
#   kill-worker     rank 1 of 3 gets SIGKILL mid-prefill: mpirun exits non-zero within 10 s and
#                   says that rank 1 died
#   kill-root       the same for rank 0 of 2
#   kill-decode     the same for rank 1 of 3 while it decodes (a short prompt, 2000 tokens)
#   stop-worker     rank 1 of 3 gets SIGSTOP mid-prefill (--rank-timeout 5): the job ends with
#                   status 1 within 60 s, "rank 1 silent for ...", and the stopped rank is gone
#   stop-root       the same for rank 0 of 2 (rank 1, waiting for its next message, names it)
#   stop-decode     the same for rank 1 of 3 while it decodes
#   kill-during-load rank 1 of 2 freezes when it opens the model (tests/mpi/stop_at_open.cpp) and
#                   then gets SIGKILL: mpirun exits non-zero within 10 s and says that rank 1 died
#   stop-during-load rank 1 of 2 stays frozen inside its load (--rank-timeout 5): the job ends
#                   with status 1 within 60 s, naming rank 1 as silent, and the frozen rank is gone
#   stop-root-during-load the same for rank 0 of 2
#   stop-before-mpi rank 1 of 2 stops itself before MPI starts: rank 0 waits inside MPI_Init, which
#                   has no timeout of its own; --rank-timeout 5 ends it there with status 1 within
#                   60 s, and the stopped rank is gone
#   truncated-file  rank 1 opens a copy of the model cut to half its size: exit 1 at start, the
#                   message names rank 1 and its file
#   changed-file    rank 1 opens a copy with one byte changed near the end of the last tensor (past
#                   its first 4 KiB): refused at start as "different model files"
#   changed-middle  rank 1 opens a copy whose last tensor (output.weight, 107 kB) has its middle
#                   half zeroed, past the first and last 4 KiB that the start-up check once read
#                   alone (the run went on and printed garbage): refused at start as "different
#                   model files"; and a copy with one byte changed in the middle of that tensor,
#                   which the sampled check may miss, is refused with --verify-weights full
#   different-models rank 1 opens another model (same shape, other seed): refused at start with
#                   "different model files", exit 1
#   too-many-ranks  5 ranks for a model with 4 KV heads (also with --weights-from-root): exit 1,
#                   "cannot split the model over 5 ranks"
#   missing-file    the model file is missing on rank 1 only: exit 1, the message names the file
#                   and rank 1
#   out-of-memory   rank 1 cannot allocate its KV cache (ulimit -v on that rank only): exit 1,
#                   "rank 1: the KV cache ... would take", no hang while rank 0 would go on
#   mismatched-options ranks started with different --sync (the MPMD command line `mpirun -np 1
#                   r1pi ... : -np 1 r1pi ...`), --check-ranks on one rank only (rank 1, then rank
#                   0), --weights-from-root on rank 2 only, a smaller -c on rank 1, --verify-weights
#                   full on rank 1 only: each refused at
#                   start, exit 1, naming the option and the rank
#   bad-start-on-one-rank an unknown flag on rank 1, a bad value on rank 2, --help on rank 1 only,
#                   a directory as rank 0's prompt file: exit 1 with "error: rank <r>: <why>", no
#                   hang (before, such a rank returned into MPI_Finalize while the others waited)
#   serve-kill-worker rank 1 of 2 of an `r1pi --serve` job gets SIGKILL while a streamed request is
#                   in flight: mpirun exits non-zero within 10 s naming rank 1, the client sees its
#                   connection end (not a hang, not [DONE]), no rank is left running
#   serve-stop-worker the same with SIGSTOP and --rank-timeout 5: status non-zero within 60 s,
#                   "error: rank 0: rank 1 silent for ...", the client's connection ends, no rank left
#   prompt-on-root-only (not a fault) a -f prompt file that only rank 0 has is enough
#   top-k-above-vocabulary (not a fault) --top-k 100000000 on 2 ranks runs under a 1 GB address-space
#                   limit per rank and samples as --top-k 0 (every row) does: it is capped at the
#                   vocabulary (before, every rank padded its list to 100M candidates: 800 MB)
source "$(dirname "$0")/lib.sh"
case_name=${1:?usage: faults.sh CASE}
TEST_NAME="mpi fault $case_name"
work=$(mktemp -d "${TMPDIR:-/tmp}/r1pi-mpi-faults.XXXXXX")
trap 'rm -rf "$work"' EXIT
tiny=$R1PI_MPI_MODELS/tiny.gguf
JOB_TIMEOUT=60  # far above any of these jobs' run time; reaching it is reported as a hang

# refused NP WANT... -- ARGS...: the job must exit with status 1 within the limit, printing every
# WANT (a fixed string).
refused() {
  local np=$1 want=()
  shift
  while [ "$1" != "--" ]; do want+=("$1"); shift; done
  shift
  job "$np" "$work/job.log" "$@"
  if [ "$rc" -eq 137 ]; then fail "hung: killed after ${JOB_TIMEOUT}s"; show "$work/job.log"; return; fi
  [ "$rc" -eq 1 ] && pass "exit status 1 after ${secs}s" || { fail "exit status $rc (want 1)"; show "$work/job.log"; }
  local w
  for w in "${want[@]}"; do
    grep -qF -- "$w" "$work/job.log" && pass "says '$w'" || { fail "does not say '$w'"; show "$work/job.log"; }
  done
}

# children PID: the processes whose parent is PID (read from /proc: no procps needed). read, not
# $(cat): a process started per /proc entry made one scan take seconds on a loaded machine, and
# stop-before-mpi's job (--rank-timeout 5) ended before a scan found its rank (2 in 10).
children() {
  local parent=$1 stat fields ppid
  for stat in /proc/[0-9]*/stat; do
    { read -r fields <"$stat"; } 2>/dev/null || continue
    fields=${fields##*) }  # "STATE PPID ...": what follows the command name, which may hold spaces
    read -r _ ppid _ <<<"$fields"
    if [ "$ppid" = "$parent" ]; then stat=${stat#/proc/}; echo "${stat%/stat}"; fi
  done
}

# slow_job NP VICTIM PHASE ARGS...: starts a long job in the background ($mpirun_pid, output in
# $log) and waits until it is in PHASE (prefill or decode); then $victim_pid is rank VICTIM's pid.
# Fails and returns 1 when either cannot be had (the job then is gone).
slow_job() {
  local np=$1 victim=$2 phase=$3
  shift 3
  log=$work/job.log
  : >"$log"  # now, not in the background child: the wait below must not read the last job's log
  local what
  case $phase in
    # -b 1: about 7000 single-token forwards over the long prompt, each with a sync: many seconds
    # (1800 once ended within the second waited below).
    prefill) what=(-f "$R1PI_MPI_MODELS/prompt-long.txt" -b 1 -n 8 -c 8192) ;;
    # A two-token prompt: decoding starts at once and goes on for 8000 tokens (19 s on 2 ranks
    # here; 2000 once ended within the second waited below on a fast host).
    decode) what=(-p hi -n 8000 -c 8192) ;;
  esac
  "$MPIRUN_WRAPPER" -np "$np" -- "$R1PI" -m "$R1PI_MPI_MODELS/slow.gguf" "${what[@]}" \
    --temp 0 -t 1 "$@" >"$log" 2>&1 &
  mpirun_pid=$!  # scripts/mpirun execs mpirun: this is mpirun's pid
  # Wait for the banner (printed once every rank has loaded and generation starts), then a bit.
  local i
  for i in $(seq 1 600); do grep -q '^run: ' "$log" && break; kill -0 $mpirun_pid 2>/dev/null || break; sleep 0.1; done
  grep -q '^run: ' "$log" || { fail "the job never started generating"; show "$log"; end_job; return 1; }
  sleep 1
  wait_rank "$victim" || { fail "no rank $victim among mpirun's children (did the job end early?)"; show "$log"; end_job; return 1; }
  kill -0 $mpirun_pid 2>/dev/null || { fail "the job ended before the fault"; show "$log"; return 1; }
}

# find_rank RANK: $victim_pid is the process of that rank (a child of mpirun with
# OMPI_COMM_WORLD_RANK in its environment), or empty. grep reads the environment itself: the
# pipeline `tr <environ | grep -q` failed now and then under pipefail (grep -q leaves at the
# match, tr then dies of SIGPIPE when the environment is longer than its 8 KiB buffer, as CI's
# is: 8 misses in 300 here with a 21 KB environment), which lost the rank
# ("no rank 1 among mpirun's children").
find_rank() {
  local child
  victim_pid=""
  for child in $(children $mpirun_pid); do
    if grep -qxzF "OMPI_COMM_WORLD_RANK=$1" "/proc/$child/environ" 2>/dev/null; then victim_pid=$child; fi
  done
}

# wait_rank RANK: find_rank until it finds the rank, while mpirun runs, for up to 60 s (a loaded
# machine can be slow to start a rank, or to exec it: until then its environment is mpirun's).
# Fails when it never appears.
wait_rank() {
  local deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    find_rank "$1"
    [ -n "$victim_pid" ] && return 0
    kill -0 $mpirun_pid 2>/dev/null || break
    sleep 0.05
  done
  find_rank "$1"
  [ -n "$victim_pid" ]
}

# starting_job NP VICTIM ARGS...: starts a job in the background and sets $victim_pid as soon as
# rank VICTIM exists.
starting_job() {
  local np=$1 victim=$2
  shift 2
  log=$work/job.log
  : >"$log"
  "$MPIRUN_WRAPPER" -np "$np" -- "$@" >"$log" 2>&1 &
  mpirun_pid=$!
  wait_rank "$victim" && return 0
  fail "rank $victim never appeared"
  show "$log"
  end_job
  return 1
}

# gone PID: the process PID (a rank) must end within 10 s of the job (Open MPI kills what is left of it).
gone() {
  local i
  for i in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then
    fail "rank process $1 is still there 10 s after the job ended"
    kill -9 "$1" 2>/dev/null || true
  else
    pass "nothing left running"
  fi
}

# end_job: what is left of the job is killed (stopped ranks too) and reaped.
end_job() {
  local child
  for child in $(children $mpirun_pid); do kill -9 "$child" 2>/dev/null || true; done
  kill -9 $mpirun_pid 2>/dev/null || true
  wait $mpirun_pid 2>/dev/null || true
}

# ends_within SECONDS WHAT: waits for mpirun to exit; fails (and ends the job) when it is still
# running after SECONDS. Its exit status goes to $status.
ends_within() {
  local limit=$1 what=$2 start=$SECONDS i
  for i in $(seq 1 $((limit * 10))); do kill -0 $mpirun_pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $mpirun_pid 2>/dev/null; then
    fail "mpirun still running $limit s after $what"
    show "$log"
    end_job
    return 1
  fi
  status=0
  wait $mpirun_pid || status=$?
  echo "  mpirun ended $((SECONDS - start))s after $what, status $status"
}

# names_killed RANK: the job's output says that rank RANK was killed (Open MPI: "mpirun noticed
# that process rank 1 with PID ... exited on signal 9 (Killed).").
names_killed() {
  grep -Eq "process rank $1 .*(signal 9|Killed)" "$log" && pass "names rank $1 and the signal" \
    || { fail "the output does not say that rank $1 was killed"; show "$log"; }
}

# names_silent RANK: the job's output names rank RANK as silent (the watchdog, --rank-timeout 5).
names_silent() {
  grep -Eq "error: rank [0-9]+: rank $1 silent for [0-9]+ s \(--rank-timeout 5\)" "$log" \
    && pass "names the silent rank $1" || { fail "the output does not name rank $1 as silent"; show "$log"; }
}

# killed NP RANK PHASE: starts a long job, kills rank RANK with SIGKILL while it computes (PHASE:
# prefill or decode), and checks that mpirun ends within 10 s with a non-zero status, naming the
# rank.
killed() {
  local np=$1 victim=$2 phase=$3
  slow_job "$np" "$victim" "$phase" || return 0
  kill -9 "$victim_pid"
  ends_within 10 "rank $victim was killed" || return 0
  [ "$status" -ne 0 ] && pass "non-zero exit ($status)" || fail "mpirun exited 0 after a rank was killed"
  names_killed "$victim"
  grep -q '^sha256: ' "$log" && fail "the job finished generating: the kill came too late" || true
}

# stopped NP RANK: starts a long job with --rank-timeout 5, stops rank RANK (SIGSTOP: a frozen
# board) while the others compute, and checks that the job ends with status 1 well within 60 s
# (the timeout, 5 s for the ranks to answer, the abort), naming the silent rank, and that the
# stopped process is gone too.
stopped() {
  local np=$1 victim=$2 phase=$3
  slow_job "$np" "$victim" "$phase" --rank-timeout 5 || return 0
  kill -STOP "$victim_pid"
  if ! ends_within 60 "rank $victim was stopped"; then kill -9 "$victim_pid" 2>/dev/null || true; return 0; fi
  [ "$status" -ne 0 ] && pass "non-zero exit ($status)" || fail "mpirun exited 0 after a rank was stopped"
  names_silent "$victim"
  gone "$victim_pid"
}

# stopped_before_mpi NP RANK WANT: rank RANK stops itself before MPI starts, with --rank-timeout 5:
# the job ends with status 1 within 60 s, printing WANT (an extended regular expression), and
# nothing is left.
stopped_before_mpi() {
  local np=$1 victim=$2 want=$3
  export "R1PI_TEST_RANK${victim}_STOP=1"
  starting_job "$np" "$victim" "$PER_RANK" "$R1PI" -m "$tiny" -p hi -n 4 -t 1 --rank-timeout 5 || return 0
  unset "R1PI_TEST_RANK${victim}_STOP"
  if ! ends_within 60 "rank $victim was stopped"; then kill -9 "$victim_pid" 2>/dev/null || true; return 0; fi
  [ "$status" -eq 1 ] && pass "exit status 1" || { fail "exit status $status (want 1)"; show "$log"; }
  grep -Eq "$want" "$log" && pass "says what happened" || { fail "the output does not match '$want'"; show "$log"; }
  gone "$victim_pid"
}

# during_load NP RANK kill|stop: rank RANK stops itself when it opens the model (the load has
# begun), then is killed or left frozen (with --rank-timeout 5); the job must end as killed() and
# stopped() require.
during_load() {
  local np=$1 victim=$2 how=$3
  export "R1PI_TEST_RANK${victim}_STOP_AT_OPEN=$tiny"
  starting_job "$np" "$victim" "$PER_RANK" "$R1PI" -m "$tiny" -p hi -n 4 -t 1 --rank-timeout 5 || return 0
  unset "R1PI_TEST_RANK${victim}_STOP_AT_OPEN"
  # Until the rank has stopped itself, however long a loaded machine takes to get it there.
  local deadline=$((SECONDS + 60)) state=""
  while [ $SECONDS -lt $deadline ]; do
    state=$(sed 's/.*) \(.\).*/\1/' "/proc/$victim_pid/stat" 2>/dev/null || true)
    [ "$state" = T ] && break
    kill -0 "$victim_pid" 2>/dev/null || break
    sleep 0.05
  done
  [ "$state" = T ] || { fail "rank $victim did not stop at the model's open (state '$state')"; show "$log"; end_job; return 0; }
  pass "rank $victim is frozen inside its load"
  if [ "$how" = kill ]; then
    kill -9 "$victim_pid"
    ends_within 10 "rank $victim was killed" || return 0
    [ "$status" -ne 0 ] && pass "non-zero exit ($status)" || fail "mpirun exited 0 after a rank was killed"
    names_killed "$victim"
    return 0
  fi
  if ! ends_within 60 "rank $victim was stopped"; then kill -9 "$victim_pid" 2>/dev/null || true; return 0; fi
  [ "$status" -eq 1 ] && pass "exit status 1" || { fail "exit status $status (want 1)"; show "$log"; }
  names_silent "$victim"
  gone "$victim_pid"
}

# serving NP ARGS...: an `r1pi --serve` job on NP ranks of the slow model in the background
# ($mpirun_pid, output in $log) with a streamed request of 8000 tokens in flight (the client,
# stream_client.py, is $client_pid and writes $work/client.out); $rank_pids are the ranks' pids.
# Fails and returns 1 when it cannot get there (the job then is gone).
serving() {
  local np=$1 i port="" r
  shift
  log=$work/job.log
  : >"$log"
  "$MPIRUN_WRAPPER" -np "$np" -- "$R1PI" -m "$R1PI_MPI_MODELS/slow.gguf" --serve --port 0 -c 8192 -t 1 \
    --ignore-eos "$@" >"$log" 2>&1 &
  mpirun_pid=$!
  for i in $(seq 1 600); do
    port=$(sed -n 's|^serve: listening on http://[^:]*:\([0-9]*\) .*|\1|p' "$log")
    [ -n "$port" ] && break
    kill -0 $mpirun_pid 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { fail "the server never listened"; show "$log"; end_job; return 1; }
  # The ranks are found before the request starts, and the fault follows its first event at once:
  # 8000 tokens take the slow model many seconds, but a fast idle host once finished 2000 in the
  # second this script used to wait.
  rank_pids=()
  for r in $(seq 0 $((np - 1))); do
    wait_rank "$r" || { fail "no rank $r among mpirun's children"; show "$log"; end_job; return 1; }
    rank_pids+=("$victim_pid")
  done
  : >"$work/client.out"
  python3 "$R1PI_SOURCE_DIR/tests/mpi/stream_client.py" "$port" 8000 120 >"$work/client.out" 2>&1 &
  client_pid=$!
  for i in $(seq 1 600); do grep -q '^first event' "$work/client.out" && break; kill -0 $client_pid 2>/dev/null || break; sleep 0.1; done
  grep -q '^first event' "$work/client.out" || { fail "the request never streamed"; show "$work/client.out"; show "$log"; end_job; return 1; }
  if grep -q '^done' "$work/client.out" || ! kill -0 $mpirun_pid 2>/dev/null; then
    fail "the request or the job ended before the fault"; show "$work/client.out"; show "$log"; end_job; return 1
  fi
}

# client_cut_off: the client of `serving` must have seen its connection end (closed, or an error
# event), neither the whole answer nor a hang.
client_cut_off() {
  wait $client_pid || true
  if grep -Eq '^(closed: |error event)' "$work/client.out"; then
    pass "the client's request ended: $(tail -n 1 "$work/client.out")"
  else
    fail "the client did not see its request cut off"
    show "$work/client.out"
  fi
}

# serve_fault NP RANK kill|stop: serving, then SIGKILL or SIGSTOP (with --rank-timeout 5) to rank
# RANK; the job must end with a non-zero status naming the rank (Open MPI's line for a killed
# rank, r1pi's error for a silent one), the client must be cut off, and no rank may be left.
serve_fault() {
  local np=$1 victim=$2 how=$3 limit pid
  if [ "$how" = kill ]; then serving "$np" || return 0; limit=10
  else serving "$np" --rank-timeout 5 || return 0; limit=60; fi
  victim_pid=${rank_pids[$victim]}
  if [ "$how" = kill ]; then kill -9 "$victim_pid"; else kill -STOP "$victim_pid"; fi
  if ! ends_within $limit "rank $victim got SIG${how^^}"; then
    kill -9 "${rank_pids[@]}" 2>/dev/null || true
    wait $client_pid || true
    return 0
  fi
  [ "$status" -ne 0 ] && pass "non-zero exit ($status)" || fail "mpirun exited 0 after rank $victim got SIG${how^^}"
  if [ "$how" = kill ]; then
    names_killed "$victim"
  else
    names_silent "$victim"
  fi
  client_cut_off
  for pid in "${rank_pids[@]}"; do gone "$pid"; done
}

# A copy of the tiny model with something wrong with it, for one rank.
flawed_copy() {  # flawed_copy truncated|changed|middle-zeroed|middle-byte OUT
  cp "$tiny" "$2"
  local size output=107520  # output.weight: 512 rows of 256 Q6_K weights, the last tensor
  size=$(stat -c %s "$tiny")
  case $1 in
    truncated) truncate -s $((size / 2)) "$2" ;;
    # 40 bytes before the end: inside output.weight, past any padding.
    changed) printf '\x5a' | dd of="$2" bs=1 seek=$((size - 40)) conv=notrunc status=none ;;
    # The middle half of output.weight: from a quarter of it to three quarters.
    middle-zeroed) head -c $((output / 2)) /dev/zero |
      dd of="$2" bs=4096 seek=$((size - output * 3 / 4)) oflag=seek_bytes conv=notrunc status=none ;;
    middle-byte) printf '\x5a' | dd of="$2" bs=1 seek=$((size - output / 2)) conv=notrunc status=none ;;
  esac
  if cmp -s "$tiny" "$2"; then die "the copy ($1) is the same as the model"; fi
}

case "$case_name" in
  kill-worker) killed 3 1 prefill ;;
  kill-root) killed 2 0 prefill ;;
  kill-decode) killed 3 1 decode ;;
  stop-worker) stopped 3 1 prefill ;;
  stop-root) stopped 2 0 prefill ;;
  stop-decode) stopped 3 1 decode ;;
  kill-during-load) during_load 2 1 kill ;;
  stop-during-load) during_load 2 1 stop ;;
  stop-root-during-load) during_load 2 0 stop ;;
  stop-before-mpi)
    stopped_before_mpi 2 1 "error: rank 0: MPI_Init did not complete within 5 s \(--rank-timeout\)"
    ;;
  truncated-file)
    flawed_copy truncated "$work/cut.gguf"
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $work/cut.gguf" \
      refused 2 "error: rank 1: $work/cut.gguf" -- "$PER_RANK" "$R1PI" -p hi -n 4 -t 1
    ;;
  changed-file)
    flawed_copy changed "$work/changed.gguf"
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $work/changed.gguf" \
      refused 2 "error: the ranks opened different model files" -- "$PER_RANK" "$R1PI" -p hi -n 4 -t 1
    ;;
  changed-middle)
    flawed_copy middle-zeroed "$work/zeroed.gguf"
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $work/zeroed.gguf" \
      refused 2 "error: the ranks opened different model files" -- "$PER_RANK" "$R1PI" -p hi -n 4 -t 1
    flawed_copy middle-byte "$work/byte.gguf"
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $work/byte.gguf" \
      refused 2 "error: the ranks opened different model files" -- \
      "$PER_RANK" "$R1PI" -p hi -n 4 -t 1 --verify-weights full
    # The same file on both ranks passes the full check.
    job 2 "$work/job.log" "$R1PI" -m "$tiny" -p hi -n 4 -t 1 --verify-weights full
    [ "$rc" -eq 0 ] && pass "the same file passes --verify-weights full" \
      || { fail "exit $rc with the same file and --verify-weights full"; show "$work/job.log"; }
    ;;
  different-models)
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $R1PI_MPI_MODELS/tiny-seed8.gguf" \
      refused 2 "error: the ranks opened different model files" "rank 0 " "rank 1 " -- \
      "$PER_RANK" "$R1PI" -p hi -n 4
    ;;
  too-many-ranks)
    refused 9 "error: " "cannot split the model over 9 ranks: it has only 8 query heads" -- \
      "$R1PI" -m "$tiny" -p hi -n 4
    refused 9 "cannot split the model over 9 ranks: it has only 8 query heads" -- \
      "$R1PI" -m "$tiny" -p hi -n 4 --weights-from-root
    ;;
  missing-file)
    missing=$work/not-on-this-board/model.gguf
    R1PI_TEST_RANK0_ARGS="-m $tiny" R1PI_TEST_RANK1_ARGS="-m $missing" R1PI_TEST_RANK2_ARGS="-m $tiny" \
      refused 3 "error: rank 1: $missing" -- "$PER_RANK" "$R1PI" -p hi -n 4
    ;;
  out-of-memory)
    # Both ranks ask for a 1M-position KV cache (512 MB per rank on the tiny model); rank 1 has a
    # 400 MB address-space limit, so its allocation fails at once whatever the machine's
    # overcommit policy, while rank 0 would be fine. (Every rank must be given the same -c.) Rank
    # 1 sees before allocating that the cache exceeds what the system grants it, and says how big.
    R1PI_TEST_RANK1_VMEM_KB=400000 \
      refused 2 "error: rank 1: the KV cache for a context of 1048576 tokens would take" -- "$PER_RANK" "$R1PI" -m "$tiny" -p hi -n 4 -t 1 -c 1048576
    ;;
  mismatched-options)
    run=("$R1PI" -m "$tiny" -p hi -n 4 -t 1)
    refused 1 "error: rank 1 was started with --sync direct, rank 0 with allreduce" -- \
      "${run[@]}" --sync allreduce : -np 1 "${run[@]}" --sync direct
    R1PI_TEST_RANK1_ARGS="--check-ranks" \
      refused 2 "error: rank 1 was started with --check-ranks on, rank 0 with off" -- "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK0_ARGS="--check-ranks" \
      refused 2 "error: rank 1 was started with --check-ranks off, rank 0 with on" -- "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK2_ARGS="--weights-from-root" \
      refused 3 "error: rank 2 was started with --weights-from-root on, rank 0 with off" -- \
      "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK1_ARGS="-c 64" \
      refused 2 "error: rank 1 was started with -c/--ctx-size 64, rank 0 with the default" -- \
      "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK1_ARGS="--verify-weights full" \
      refused 2 "error: rank 1 was started with --verify-weights full, rank 0 with sampled" -- \
      "$PER_RANK" "${run[@]}"
    ;;
  bad-start-on-one-rank)
    run=("$R1PI" -m "$tiny" -p hi -n 4 -t 1)
    R1PI_TEST_RANK1_ARGS="--no-such-flag" \
      refused 2 "error: rank 1: " "--no-such-flag" -- "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK2_ARGS="--top-p 7" refused 3 "error: rank 2: " "--top-p" -- "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK1_ARGS="--help" \
      refused 2 "error: rank 1: --help was given on this rank but not on rank 0" -- "$PER_RANK" "${run[@]}"
    R1PI_TEST_RANK0_ARGS="-f $work" \
      refused 2 "error: rank 0: $work: the prompt file is not a regular file" -- \
      "$PER_RANK" "$R1PI" -m "$tiny" -n 4 -t 1
    ;;
  serve-kill-worker) serve_fault 2 1 kill ;;
  serve-stop-worker) serve_fault 2 1 stop ;;
  prompt-on-root-only)
    # Not a fault: only rank 0 reads a -f prompt file, so the other boards need no copy of it.
    prompt=$work/prompt.txt
    printf 'Once upon a time' >"$prompt"
    job 2 "$work/all.log" "$R1PI" -m "$tiny" -f "$prompt" -n 8 --temp 0 -t 1
    want=$(sha_of "$work/all.log")
    [ -n "$want" ] || { fail "the run with the prompt file on every rank failed"; show "$work/all.log"; }
    R1PI_TEST_RANK0_ARGS="-f $prompt" R1PI_TEST_RANK1_ARGS="-f $work/absent.txt" \
      job 2 "$work/job.log" "$PER_RANK" "$R1PI" -m "$tiny" -n 8 --temp 0 -t 1
    [ "$rc" -eq 0 ] && [ "$(sha_of "$work/job.log")" = "$want" ] \
      && pass "runs without the prompt file on rank 1, same sha256" \
      || { fail "exit $rc, sha '$(sha_of "$work/job.log")' (want $want)"; show "$work/job.log"; }
    ;;
  top-k-above-vocabulary)
    sampled=("$R1PI" -m "$tiny" -p hi -n 8 --temp 1 --seed 5 -t 1)
    job 2 "$work/all.log" "${sampled[@]}" --top-k 0
    want=$(sha_of "$work/all.log")
    [ -n "$want" ] || { fail "the --top-k 0 run failed"; show "$work/all.log"; }
    R1PI_TEST_RANK0_VMEM_KB=1000000 R1PI_TEST_RANK1_VMEM_KB=1000000 \
      job 2 "$work/job.log" "$PER_RANK" "${sampled[@]}" --top-k 100000000
    [ "$rc" -eq 0 ] && [ "$(sha_of "$work/job.log")" = "$want" ] \
      && pass "--top-k 100000000 runs in 1 GB per rank, the same sha256 as --top-k 0" \
      || { fail "exit $rc, sha '$(sha_of "$work/job.log")' (want $want)"; show "$work/job.log"; }
    ;;
  *) die "unknown case '$case_name'" ;;
esac
finish
