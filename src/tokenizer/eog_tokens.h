// End-of-generation ids shared by the vocabulary loaders.
#pragma once
#include <cstdint>
#include <vector>

#include "tokenizer/vocab.h"

namespace r1pi {

// EOS plus the chat-turn terminators Llama 3 models emit instead of it ("<|eot_id|>",
// "<|eom_id|>"), when the vocabulary has them as CONTROL tokens.
std::vector<int32_t> standard_eog_ids(const Vocab& vocab);

// Adds id to ids unless it is negative or already there.
void add_eog_id(std::vector<int32_t>& ids, int64_t id);

}  // namespace r1pi
