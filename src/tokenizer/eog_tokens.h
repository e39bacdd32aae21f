// End-of-generation ids shared by the vocabulary loaders.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace r1pi {

// EOS plus the chat-turn terminators models emit instead of it (Llama 3's "<|eot_id|>" and
// "<|eom_id|>", Qwen's "<|im_end|>" and "<|endoftext|>"), when the vocabulary has them as CONTROL
// tokens.
std::vector<int32_t> standard_eog_ids(const Vocab& vocab);

// True for the text of a chat turn's end ("<|eot_id|>", "<|im_end|>").
bool ends_turn(std::string_view text);

// Adds id to ids unless it is negative or already there.
void add_eog_id(std::vector<int32_t>& ids, int64_t id);

}  // namespace r1pi
