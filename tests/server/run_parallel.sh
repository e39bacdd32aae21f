#!/usr/bin/env bash
# run_parallel.sh NP: a --parallel 4 server on stories260K on NP ranks against the openai npm client
# (parallel_client.mjs): concurrent answers equal solo ones, cancelling frees a slot, a long prompt
# joins running streams without changing them; then the server stops cleanly on SIGTERM.
source "$(dirname "$0")/lib.sh"
np=${1:?usage: run_parallel.sh NP}
"$R1PI_SOURCE_DIR/tests/server/npm_install.sh" "$NPM_DIR" || die "npm install failed"  # a no-op after server_npm
start_server parallel "$np" -m "$(make_model stories)" --parallel 4 -c 1024 -b 16
grep -q "4 slots of 1024 tokens" "$SCRATCH/parallel.log" || die "the listening line does not show the slots"
rc=0
URL=http://127.0.0.1:$PORT timeout 600 node "$(node_script parallel_client.mjs)" || rc=$?
stop_and_check parallel "$np"
[ "$rc" -eq 0 ] || die "the parallel client checks failed"
echo "PASS: $TEST_NAME: --parallel 4 on $np rank(s), the server stopped cleanly"
