# Shared by the server test drivers (sourced): the programs, a scratch folder, servers started
# in the background and always stopped, PASS:/FAIL: lines. ctest sets R1PI_BIN_DIR,
# R1PI_SOURCE_DIR and R1PI_SHARED_DATA.
set -euo pipefail
: "${R1PI_BIN_DIR:?set R1PI_BIN_DIR to the build folder}"
: "${R1PI_SOURCE_DIR:?set R1PI_SOURCE_DIR to the checkout}"
: "${R1PI_SHARED_DATA:?set R1PI_SHARED_DATA to the test data folder}"
R1PI=$R1PI_BIN_DIR/r1pi
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
SCRATCH=$R1PI_BIN_DIR/test-scratch/server/$TEST_NAME
NPM_DIR=$R1PI_BIN_DIR/test-scratch/npm
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
server_pids=()

# node_script FILE [MODULE...]: copies of tests/server/FILE and the modules it imports in a folder
# of this test's below the npm packages, where node's module resolution (ES modules ignore
# NODE_PATH) finds them; prints FILE's path.
node_script() {
  local dir=$NPM_DIR/scripts/$TEST_NAME
  mkdir -p "$dir"
  for file in "$@"; do cp "$R1PI_SOURCE_DIR/tests/server/$file" "$dir/"; done
  echo "$dir/$1"
}

die() { echo "FAIL: $TEST_NAME: $*"; exit 1; }

stop_servers() {
  local pid
  for pid in "${server_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${server_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  server_pids=()
}
trap stop_servers EXIT

# make_model KIND: the path of the test model: r1 (generated: tiny preset, Llama 3 BPE with
# DeepSeek-R1's special tokens, so the R1 template is detected) or stories (the trained
# stories260K of shared/data, SentencePiece vocabulary, no template: ChatML).
make_model() {
  case "$1" in
    r1)
      "$R1PI_BIN_DIR/r1pi-model" make --no-progress --preset tiny --seed 7 \
        --tokenizer "$R1PI_SHARED_DATA/llama3-tokenizer.json" --deepseek-specials -o "$SCRATCH/r1.gguf" >/dev/null
      echo "$SCRATCH/r1.gguf" ;;
    stories) echo "$R1PI_SHARED_DATA/models/stories260K/stories260K.gguf" ;;
    *) die "unknown model kind $1" ;;
  esac
}

# start_server NAME NP ARGS...: r1pi --serve --port 0 on NP ranks in the background; sets PORT
# from its "listening on" line (the log is $SCRATCH/NAME.log).
start_server() {
  local name=$1 np=$2 log=$SCRATCH/$1.log
  shift 2
  : >"$log"  # before the background start: the poll below must not race the child's redirection
  if [ "$np" -gt 1 ]; then
    "$R1PI_SOURCE_DIR/scripts/mpirun" -np "$np" -- "$R1PI" "$@" --serve --port 0 -t 1 >"$log" 2>&1 &
  else
    "$R1PI" "$@" --serve --port 0 -t 1 >"$log" 2>&1 &
  fi
  server_pids+=($!)
  PORT=""
  for _ in $(seq 1 600); do
    PORT=$(sed -n 's|^serve: listening on http://[^:]*:\([0-9]*\) .*|\1|p' "$log")
    [ -n "$PORT" ] && return 0
    kill -0 "${server_pids[-1]}" 2>/dev/null || { cat "$log"; die "the $name server did not start"; }
    sleep 0.1
  done
  cat "$log"
  die "the $name server did not listen within 60 s"
}

# stop_and_check NAME NP: SIGTERM to the last server started; it must say it stopped, and exit 0.
# Under mpirun the signal goes to mpirun, which passes it on: rank 0 finishes and stops the workers
# (every rank then reports its memory), but mpirun itself exits 1 for having been signalled, so
# there the check is every rank's report.
stop_and_check() {
  local name=$1 np=$2 pid=${server_pids[-1]} rc=0 log=$SCRATCH/$1.log
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  unset 'server_pids[-1]'
  grep -q "^serve: stopped" "$log" || { tail -n 20 "$log"; die "the $name server did not stop cleanly"; }
  if [ "$np" -gt 1 ]; then
    [ "$(grep -c '^rank [0-9]*: shard' "$log")" -eq "$np" ] || { tail -n 20 "$log"; die "not every rank of the $name server ended cleanly"; }
  elif [ "$rc" -ne 0 ]; then
    tail -n 20 "$log"
    die "the $name server exited $rc after SIGTERM"
  fi
}
