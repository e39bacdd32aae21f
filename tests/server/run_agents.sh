#!/usr/bin/env bash
# run_agents.sh KIND RANKS: the agents' npm clients (openai, @langchain/openai, @anthropic-ai/sdk,
# with zod and ajv) against servers on the model KIND: qwen3 (random weights, tiny preset, Qwen3's
# vocabulary and chat template), llama (random weights, tiny preset, Llama 3's vocabulary and
# Llama 3.1's template) or stories (stories260K, ChatML). agents_client.mjs: servers of the model
# answer the same constrained requests: one slot (with --api-key, as all of them), --parallel 2,
# --spec, and with RANKS 2 two ranks under mpirun (--parallel 2 --spec), compared with the CLI on
# as many ranks; for stories also one with Gemma 2's template (its raise_exception).
# tool_calls_client.mjs: tool calls on the one-slot server, in the syntax of the model's template,
# and for qwen3 also on a server with Qwen3-Coder's template (its XML calls). KIND gpt-oss (random
# weights, tiny preset, o200k_harmony from O200K_TOKENIZER) runs only the tool calls, on a server
# with r1pi's harmony template and one with gpt-oss's own: a random model's free analysis would
# run the constrained checks of agents_client.mjs to their token limit. Every server must then stop cleanly on SIGTERM.
source "$(dirname "$0")/lib.sh"
kind=${1:?usage: run_agents.sh KIND RANKS} ranks=${2:?usage: run_agents.sh KIND RANKS}
"$R1PI_SOURCE_DIR/tests/server/npm_install.sh" "$NPM_DIR" || die "npm install failed"  # a no-op after server_npm
templates=$R1PI_SHARED_DATA/templates
make_random() {  # make_random ARCH TOKENIZER_JSON: a random tiny model with that vocabulary
  "$R1PI_BIN_DIR/r1pi-model" make --no-progress --arch "$1" --preset tiny --seed 7 --tokenizer "$2" \
    -o "$SCRATCH/$kind.gguf" >/dev/null || die "r1pi-model make failed"
  echo "$SCRATCH/$kind.gguf"
}
case "$kind" in  # the model, and the syntax its template's calls are written in
  qwen3) weights=(-m "$(make_random qwen3 "$R1PI_SHARED_DATA/qwen/tokenizers/qwen3/tokenizer.json")")
         model=("${weights[@]}" --chat-template-file "$templates/Qwen-Qwen3-0.6B.jinja") syntax=hermes ;;
  llama) model=(-m "$(make_random llama "$R1PI_SHARED_DATA/llama3-tokenizer.json")"
                --chat-template-file "$templates/meta-llama-Llama-3.1-8B-Instruct.jinja") syntax=llama3 ;;
  stories) model=(-m "$(make_model stories)") syntax=generic ;;
  gpt-oss) model=(-m "$(make_random gpt-oss "${O200K_TOKENIZER:?}")") syntax=harmony ;;
  *) die "unknown kind $kind (qwen3, llama, stories or gpt-oss)" ;;
esac
key=agents-key-$$
printf '1 1\n16 1\n' >"$SCRATCH/flat-cost.txt"  # every draft the history offers is tried
started=()  # name:ranks, in the order started (stop_and_check stops the last one)
serve() {  # serve NAME NP ARGS...: sets the URL of the server started
  start_server "$1" "$2" "${model[@]}" --api-key "$key" "${@:3}"
  started+=("$1:$2")
}
serve solo 1
solo=http://127.0.0.1:$PORT
if [ "$kind" = gpt-oss ]; then  # r1pi's harmony template, then gpt-oss's own through the Jinja engine
  tool_calls=$(node_script tool_calls_client.mjs agents_common.mjs)
  URL=$solo SYNTAX=$syntax LABEL="$syntax calls" API_KEY=$key KIND=$kind timeout 300 node "$tool_calls" ||
    die "the tool calls client checks failed"
  start_server own 1 "${model[@]}" --chat-template-file "$templates/openai-gpt-oss-120b.jinja" --api-key "$key"
  URL=http://127.0.0.1:$PORT SYNTAX=$syntax LABEL="gpt-oss's template" API_KEY=$key KIND=$kind \
    timeout 300 node "$tool_calls" || die "the tool calls client checks failed on gpt-oss's template"
  stop_and_check own 1
  stop_and_check solo 1
  echo "PASS: $TEST_NAME: $kind, its two servers stopped cleanly"
  exit 0
fi
serve par 1 --parallel 2
par=http://127.0.0.1:$PORT
serve spec 1 --spec --spec-cost "$SCRATCH/flat-cost.txt"
spec=http://127.0.0.1:$PORT
ranks_url=""
cli=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$R1PI" "${model[@]}" -t 1)
if [ "$ranks" -gt 1 ]; then
  serve ranks "$ranks" --parallel 2 --spec --spec-cost "$SCRATCH/flat-cost.txt"
  ranks_url=http://127.0.0.1:$PORT
  cli_ranks=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \
    "$R1PI_SOURCE_DIR/scripts/mpirun" -np "$ranks" -- "$R1PI" "${model[@]}" -t 1)
fi
gemma_url=""
if [ "$kind" = stories ]; then
  model+=(--chat-template-file "$templates/google-gemma-2-2b-it.jinja")
  serve gemma 1
  gemma_url=http://127.0.0.1:$PORT
fi
coder_url=""
if [ "$kind" = qwen3 ]; then
  start_server coder 1 "${weights[@]}" --chat-template-file "$templates/Qwen3-Coder.jinja" --api-key "$key"
  started+=(coder:1)
  coder_url=http://127.0.0.1:$PORT
fi
rc=0
URL=$solo PAR_URL=$par SPEC_URL=$spec RANKS_URL=$ranks_url GEMMA_URL=$gemma_url API_KEY=$key KIND=$kind \
  CLI=$cli CLI_RANKS=${cli_ranks:-} \
  timeout 600 node "$(node_script agents_client.mjs agents_common.mjs)" || rc=$?
tool_calls=$(node_script tool_calls_client.mjs agents_common.mjs)
URL=$solo SYNTAX=$syntax LABEL="$syntax calls" API_KEY=$key KIND=$kind timeout 300 node "$tool_calls" || rc=$?
if [ -n "$coder_url" ]; then
  URL=$coder_url SYNTAX=qwen3-coder LABEL="Qwen3-Coder's template" API_KEY=$key KIND=$kind \
    timeout 300 node "$tool_calls" || rc=$?
fi
for ((i = ${#started[@]} - 1; i >= 0; i--)); do
  stop_and_check "${started[i]%%:*}" "${started[i]##*:}"
done
[ "$rc" -eq 0 ] || die "the agents client checks failed"
echo "PASS: $TEST_NAME: $kind, ${#started[@]} servers stopped cleanly"
