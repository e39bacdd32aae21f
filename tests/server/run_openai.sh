#!/usr/bin/env bash
# run_openai.sh KIND NP [spec]: the openai npm client against two servers on the model KIND (r1 or
# stories, lib.sh) on NP ranks (openai_client.mjs), compared with the CLI on as many ranks; both
# servers must then stop cleanly on SIGTERM (every rank). With `spec` the servers decode
# speculatively (a flat cost curve: every draft the history offers is tried) while the CLI does
# not, so every equality the client checks is also speculation against none; and /metrics must
# show drafts accepted.
source "$(dirname "$0")/lib.sh"
kind=${1:?usage: run_openai.sh KIND NP [spec]} np=${2:?usage: run_openai.sh KIND NP [spec]}
spec=()
if [ "${3:-}" = spec ]; then
  printf '1 1\n16 1\n' >"$SCRATCH/flat-cost.txt"
  spec=(--spec --spec-cost "$SCRATCH/flat-cost.txt")
fi
"$R1PI_SOURCE_DIR/tests/server/npm_install.sh" "$NPM_DIR" || die "npm install failed"  # a no-op after the ctest fixture server_npm
model=$(make_model "$kind")
template=chatml
[ "$kind" = r1 ] && template=deepseek-r1
key=test-key-$$
start_server warm "$np" -m "$model" "${spec[@]}"
warm=http://127.0.0.1:$PORT
start_server cold "$np" -m "$model" --api-key "$key" --queue-size 2 "${spec[@]}"
cold=http://127.0.0.1:$PORT
if [ "$np" -gt 1 ]; then
  cli="[\"$R1PI_SOURCE_DIR/scripts/mpirun\", \"-np\", \"$np\", \"--\", \"$R1PI\", \"-m\", \"$model\", \"-t\", \"1\"]"
else
  cli="[\"$R1PI\", \"-m\", \"$model\", \"-t\", \"1\"]"
fi
rc=0
WARM_URL=$warm COLD_URL=$cold API_KEY=$key TEMPLATE=$template CLI=$cli \
  timeout 600 node "$(node_script openai_client.mjs)" || rc=$?
if [ ${#spec[@]} -gt 0 ]; then
  accepted=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "$warm/metrics" | sed -n 's/^r1pi_spec_accepted_tokens_total \([0-9]*\)$/\1/p')
  [ "${accepted:-0}" -gt 0 ] && echo "PASS: $TEST_NAME: /metrics: $accepted draft tokens accepted" \
    || { echo "FAIL: $TEST_NAME: /metrics shows no accepted drafts ('${accepted}')"; rc=1; }
fi
stop_and_check cold "$np"
stop_and_check warm "$np"
[ "$rc" -eq 0 ] || die "the openai client checks failed"
echo "PASS: $TEST_NAME: $kind on $np rank(s), both servers stopped cleanly"
