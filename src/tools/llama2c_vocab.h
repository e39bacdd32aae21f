// The vocabulary of a llama2.c model (SentencePiece style, GGUF tokenizer.ggml.model "llama").
#pragma once
#include <cstdint>
#include <string>

#include "tokenizer/vocab.h"

namespace r1pi {

// From llama2.c's tokenizer.bin (int32 max_token_length, then per token: float score, int32
// length, bytes), typed as llama.cpp's converter types it: 0 <unk>, 1 <s>, 2 </s>, <0xXX> bytes,
// spaces stored as U+2581. Empty tokenizer_bin: placeholders "<unk>", "<s>", "</s>", the 256 byte
// tokens, then "<piece_N>", all scores 0. Throws r1pi::Error naming the file.
Vocab llama2c_vocab(const std::string& tokenizer_bin, uint32_t n_vocab);

}  // namespace r1pi
