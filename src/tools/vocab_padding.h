// Pads a tokenizer's vocabulary to a model's size with control tokens, as Llama 3 pads its own
// (names that the tokenizer already uses are skipped).
#pragma once
#include <cstdint>

namespace r1pi {

struct Vocab;
void pad_vocab(Vocab& vocab, uint32_t n_vocab);

}  // namespace r1pi
