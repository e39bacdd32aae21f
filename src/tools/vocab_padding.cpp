#include "tools/vocab_padding.h"

#include <string>
#include <unordered_set>

#include "tokenizer/vocab.h"

namespace r1pi {
namespace {

void add_token(Vocab& v, std::string text, TokenType type) {
  v.tokens.push_back(std::move(text));
  v.types.push_back(type);
  if (!v.scores.empty()) v.scores.push_back(0.0f);
}

}  // namespace

void pad_vocab(Vocab& v, uint32_t n_vocab, VocabPadding padding) {
  if (padding == VocabPadding::Unused) {
    while (v.tokens.size() < n_vocab)
      add_token(v, "[PAD" + std::to_string(v.tokens.size()) + "]", TokenType::UNUSED);
    return;
  }
  std::unordered_set<std::string> used(v.tokens.begin(), v.tokens.end());
  for (uint32_t k = 0; v.tokens.size() < n_vocab; ++k) {
    std::string name = "<|reserved_special_token_" + std::to_string(k) + "|>";
    if (!used.count(name)) add_token(v, std::move(name), TokenType::CONTROL);
  }
}

}  // namespace r1pi
