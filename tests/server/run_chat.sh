#!/usr/bin/env bash
# run_chat.sh NP: the terminal chat (chat_pty.py) on the generated R1 model on NP ranks.
source "$(dirname "$0")/lib.sh"
np=${1:?usage: run_chat.sh NP}
model=$(make_model r1)
timeout 500 python3 "$R1PI_SOURCE_DIR/tests/server/chat_pty.py" "$R1PI" "$model" "$np" "$R1PI_SOURCE_DIR/scripts/mpirun" ||
  die "the chat checks failed"
echo "PASS: $TEST_NAME"
