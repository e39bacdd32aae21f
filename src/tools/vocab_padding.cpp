#include "tools/vocab_padding.h"

#include <string>
#include <unordered_set>

#include "tokenizer/vocab.h"

namespace r1pi {

void pad_vocab(Vocab& v, uint32_t n_vocab) {
  std::unordered_set<std::string> used(v.tokens.begin(), v.tokens.end());
  for (uint32_t k = 0; v.tokens.size() < n_vocab; ++k) {
    std::string name = "<|reserved_special_token_" + std::to_string(k) + "|>";
    if (used.count(name)) continue;
    v.tokens.push_back(std::move(name));
    v.types.push_back(TokenType::CONTROL);
    if (!v.scores.empty()) v.scores.push_back(0.0f);
  }
}

}  // namespace r1pi
