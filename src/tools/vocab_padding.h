// Pads a tokenizer's vocabulary to a model's size: the ids the model has and the tokenizer lacks.
#pragma once
#include <cstdint>

namespace r1pi {

struct Vocab;

enum class VocabPadding {
  // <|reserved_special_token_K|> control tokens, as Llama 3 names its own spare ids (names that
  // the tokenizer already uses are skipped).
  ReservedSpecial,
  // "[PAD<id>]" unused tokens, as llama.cpp's convert_hf_to_gguf.py writes them (Qwen's files: the
  // model's 151,936 rows over the tokenizer's 151,669 tokens).
  Unused,
};

void pad_vocab(Vocab& vocab, uint32_t n_vocab, VocabPadding padding);

}  // namespace r1pi
