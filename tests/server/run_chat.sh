#!/usr/bin/env bash
# run_chat.sh NP: the terminal chat (chat_pty.py) on the generated R1 model on NP ranks; on one rank
# also typed in every language and in several lines (chat_pty_input.py).
source "$(dirname "$0")/lib.sh"
np=${1:?usage: run_chat.sh NP}
model=$(make_model r1)
timeout 500 python3 "$R1PI_SOURCE_DIR/tests/server/chat_pty.py" "$R1PI" "$model" "$np" "$R1PI_SOURCE_DIR/scripts/mpirun" ||
  die "the chat checks failed"
if [ "$np" -eq 1 ]; then
  timeout 500 python3 "$R1PI_SOURCE_DIR/tests/server/chat_pty_input.py" "$R1PI" "$model" ||
    die "the chat input checks failed"
fi
echo "PASS: $TEST_NAME"
