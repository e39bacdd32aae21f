#include "tokenizer/eog_tokens.h"

#include <algorithm>

namespace r1pi {

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
    if (vocab.types[id] == TokenType::CONTROL && (text == "<|eot_id|>" || text == "<|eom_id|>")) {
      add_eog_id(ids, static_cast<int64_t>(id));
    }
  }
  return ids;
}

}  // namespace r1pi
