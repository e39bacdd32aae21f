// `r1pi --chat`: a conversation in the terminal on rank 0 (the other ranks follow its control
// messages). The KV cache is kept across turns through the prompt cache: a turn feeds what
// follows the longest prefix it shares with what was fed before (with R1's template, the
// previous answer loses its reasoning, so it is fed again without it, then the new question).
#pragma once
#include "chat/chat_options.h"
#include "runtime/token_source.h"

namespace r1pi {

// Runs until /quit or end of input; returns the exit code.
int run_chat(TokenSource& source, const Tokenizer& tokenizer, const ChatOptions& options);

}  // namespace r1pi
