# Shared by the MPI test drivers (sourced). ctest sets R1PI_BIN_DIR (r1pi, r1pi-model,
# mpi_teacher_forced), R1PI_MPI_MODELS (the models made by make_models.sh) and R1PI_SOURCE_DIR.
set -euo pipefail
: "${R1PI_BIN_DIR:?set R1PI_BIN_DIR to the build folder}"
: "${R1PI_MPI_MODELS:?set R1PI_MPI_MODELS to the folder make_models.sh wrote}"
: "${R1PI_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
R1PI=$R1PI_BIN_DIR/r1pi
# Every job goes through scripts/mpirun (root, oversubscription, yield-when-idle), so the tests
# also exercise the wrapper the README tells people to use.
MPIRUN_WRAPPER=$R1PI_SOURCE_DIR/scripts/mpirun
PER_RANK=$R1PI_SOURCE_DIR/tests/mpi/per_rank.sh
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
failures=0

pass() { echo "PASS: $TEST_NAME: $*"; }
fail() { echo "FAIL: $TEST_NAME: $*"; failures=$((failures + 1)); }
die() { echo "FAIL: $TEST_NAME: $*"; exit 1; }
finish() {
  if [ "$failures" -eq 0 ]; then echo "PASS: $TEST_NAME (all checks)"; exit 0; fi
  echo "FAIL: $TEST_NAME: $failures check(s) failed"
  exit 1
}

# every_configuration: true unless the build is a sanitizer's (R1PI_SANITIZED=1, set by
# tests/mpi/CMakeLists.txt), where a script runs one configuration per code path: the other
# twins check bytes, which the normal build does.
# R1PI_PATHS_ONLY=1 asks the same of a normal build's test (the rank counts past the KV heads, the
# mixture of experts: the repeats' bytes are the dense models' at np 2-4).
every_configuration() { [ "${R1PI_SANITIZED:-0}" != 1 ] && [ "${R1PI_PATHS_ONLY:-0}" != 1 ]; }

# job NP LOG ARGS...: scripts/mpirun -np NP -- ARGS... with a hard limit (a hang is a failure, not
# a stuck ctest); the output goes to LOG, the exit status to $rc, the seconds taken to $secs.
job() {
  local np=$1 log=$2
  shift 2
  local start=$SECONDS
  rc=0
  timeout -s KILL "${JOB_TIMEOUT:-120}" "$MPIRUN_WRAPPER" -np "$np" -- "$@" >"$log" 2>&1 || rc=$?
  secs=$((SECONDS - start))
}

# sha_of LOG: the sha256 line of an r1pi summary (empty when there is none).
sha_of() { sed -n 's/^sha256: \([0-9a-f]\{64\}\)$/\1/p' "$1" | tail -n 1; }

show() { sed 's/^/    | /' "$1"; }

# run NAME ARGS...: one r1pi job on $np ranks with "${base[@]}" ARGS..., its log in $work/NAME.log;
# checks it succeeded and printed a sha (and, on several ranks with --check-ranks in base, that
# the hidden states agreed in every forward); sets $sha (empty on failure).
run() {
  local name=$1
  shift
  job "$np" "$work/$name.log" "$R1PI" "${base[@]}" "$@"
  sha=$(sha_of "$work/$name.log")
  if [ "$rc" -ne 0 ] || [ -z "$sha" ]; then
    fail "$name ($*): exit $rc, sha '${sha}'"
    show "$work/$name.log"
    sha=""
    return
  fi
  if [ "$np" -gt 1 ] && [[ " ${base[*]} " == *" --check-ranks "* ]]; then
    if grep -Eq "^ranks: hidden states identical after every layer on all $np ranks \([1-9][0-9]* forwards\)$" \
        "$work/$name.log"; then :; else
      fail "$name: no 'hidden states identical' line for $np ranks"
      show "$work/$name.log"
    fi
  fi
  echo "  $name: sha256 $sha (${secs}s) $(grep '^spec: ' "$work/$name.log" | cut -c1-70)"
}
