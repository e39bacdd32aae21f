// What a token contributes to decoded text, by vocabulary family and token type:
//  - NORMAL (and UNDEFINED): byte-level BPE maps the GPT-2 characters back to bytes; SentencePiece
//    turns "▁" back into a space;
//  - BYTE "<0xXX>": that one byte;
//  - USER_DEFINED: its text as stored (added tokens such as "<think>" are not byte-mapped);
//  - CONTROL and UNUSED (BOS, EOS, reserved): nothing;
//  - UNKNOWN: "▅" (U+2585), as llama.cpp shows it, so that lost input stays visible.
#pragma once
#include <cstdint>
#include <string>

#include "tokenizer/vocab.h"

namespace r1pi {

std::string render_token_bytes(const Vocab& vocab, int32_t id);

}  // namespace r1pi
