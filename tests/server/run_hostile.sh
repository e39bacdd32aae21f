#!/usr/bin/env bash
# run_hostile.sh: `r1pi --serve` (stories260K, --queue-size 32) against what a careless or hostile
# client does (hostile_client.py: idle connections by the thousand, a 64 MiB chunked upload,
# pipelined requests, a burst over the queue, malformed requests, too many connections from one
# address, bodies held one byte short past the memory budget), then the options a server must
# refuse to start with: an empty --api-key and an --api-key-file that is a directory.
source "$(dirname "$0")/lib.sh"
model=$(make_model stories)
start_server hostile 1 -m "$model" --queue-size 32
R1PI_SERVER_PID=${server_pids[-1]} python3 "$R1PI_SOURCE_DIR/tests/server/hostile_client.py" "$PORT" ||
  die "hostile_client.py failed"
stop_and_check hostile 1
# The same burst against a queue of 4: most of it is refused, with 503 and Retry-After.
start_server small_queue 1 -m "$model" --queue-size 4
python3 "$R1PI_SOURCE_DIR/tests/server/hostile_client.py" "$PORT" burst || die "hostile_client.py burst failed"
stop_and_check small_queue 1
# --max-connections-per-address: the cap moves with it.
start_server per_address 1 -m "$model" --max-connections-per-address 3
PER_ADDRESS=3 python3 "$R1PI_SOURCE_DIR/tests/server/hostile_client.py" "$PORT" per_address_cap ||
  die "hostile_client.py per_address_cap failed"
stop_and_check per_address 1

# refused_start WHAT WANT ARGS...: r1pi exits non-zero without listening, saying WANT (a regex).
refused_start() {
  local what=$1 want=$2 out=$SCRATCH/refused.log rc=0
  shift 2
  timeout 60 "$R1PI" -m "$model" --serve --port 0 -t 1 "$@" >"$out" 2>&1 || rc=$?
  grep -q "^serve: listening" "$out" && die "$what: the server started"
  [ "$rc" -ne 0 ] || die "$what: exit status 0"
  grep -Eq -e "$want" "$out" || { cat "$out"; die "$what: the message does not say '$want'"; }
  echo "PASS: $TEST_NAME: $what: $(grep -E -e "$want" "$out")"
}
refused_start '--api-key ""' 'api-key is empty' --api-key ""
refused_start '--api-key-file DIR' 'API key file is a directory' --api-key-file "$SCRATCH"
echo "PASS: $TEST_NAME"
