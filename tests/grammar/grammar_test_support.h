// What the grammar tests share: feeding text to a grammar byte by byte, and the Llama 3
// vocabulary's trie.
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"
#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/tokenizer.h"

namespace r1pi::test {

// Whether the grammar matches the whole text, fed one byte at a time (a rejected byte ends it).
inline bool grammar_matches(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  GrammarState state(grammar);
  for (char c : text)
    if (!state.accept(std::string_view(&c, 1))) return false;
  return state.can_end();
}

// Whether the text is a prefix of something the grammar matches.
inline bool grammar_accepts_prefix(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  GrammarState state(grammar);
  return state.accept(text);
}

// Loading tokenizer.json takes about a second: once per test program.
inline const Tokenizer& llama3_tokenizer() {
  static const Tokenizer t(load_hf_tokenizer_json(shared_data("llama3-tokenizer.json"), SpecialTokenNames::Llama3));
  return t;
}
inline const TokenTrie& llama3_trie() {
  static const TokenTrie t(llama3_tokenizer());
  return t;
}

}  // namespace r1pi::test
