#include "tokenizer/eog_tokens.h"

#include <algorithm>
#include <span>

namespace r1pi {
namespace {

// What models end generation with besides EOS, found by their text as llama.cpp finds them: the end
// of a chat turn (Llama 3's, Qwen's ChatML one), Llama 3's end of message, Qwen's end of document
// (what its base models end with) and harmony's end of an answer and of a tool call (gpt-oss; its
// <|end|> closes a message within the turn and does not end generation).
constexpr std::string_view kTurnEnds[] = {"<|eot_id|>", "<|im_end|>"};
constexpr std::string_view kOtherEnds[] = {"<|eom_id|>", "<|endoftext|>", "<|return|>", "<|call|>"};

bool is_one_of(std::string_view text, std::span<const std::string_view> texts) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

}  // namespace

bool ends_turn(std::string_view text) { return is_one_of(text, kTurnEnds); }

void add_eog_id(std::vector<int32_t>& ids, int64_t id) {
  if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end())
    ids.push_back(static_cast<int32_t>(id));
}

std::vector<int32_t> standard_eog_ids(const Vocab& vocab) {
  std::vector<int32_t> ids;
  add_eog_id(ids, vocab.eos_id);
  // Bounded by both sizes: this may run before validate() has checked that they agree.
  for (size_t id = 0; id < vocab.tokens.size() && id < vocab.types.size(); ++id) {
    const std::string& text = vocab.tokens[id];
    if (vocab.types[id] == TokenType::CONTROL && (ends_turn(text) || is_one_of(text, kOtherEnds))) {
      add_eog_id(ids, static_cast<int64_t>(id));
    }
  }
  return ids;
}

}  // namespace r1pi
