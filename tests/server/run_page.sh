#!/usr/bin/env bash
# run_page.sh: the chat page in headless Chromium (chat_page.mjs) against a server on the
# generated R1 model; the screenshots (chat_page*.png) land in the build folder's test-artifacts/.
source "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || die "no chromium (scripts/setup installs it)"
"$R1PI_SOURCE_DIR/tests/server/npm_install.sh" "$NPM_DIR" || die "npm install failed"  # a no-op after the ctest fixture server_npm
model=$(make_model r1)
start_server page 1 -m "$model" -n 300
mkdir -p "$R1PI_BIN_DIR/test-artifacts"
rc=0
BASE_URL=http://127.0.0.1:$PORT ARTIFACTS=$R1PI_BIN_DIR/test-artifacts \
  timeout 300 node "$(node_script chat_page.mjs)" || rc=$?
stop_and_check page 1
[ "$rc" -eq 0 ] || die "the page checks failed"
echo "PASS: $TEST_NAME"
