// A grammar as the generation loop's constraint (sampling/token_constraint.h): the mask of
// grammar/token_mask.h at each step. For a reasoning model the grammar begins after its reasoning:
// the think block stays free, and the answer after "</think>" must match (R1's prompt opens the
// block; Qwen3 may open it with its first token, or answer at once under the grammar).
#pragma once
#include <memory>
#include <string>

#include "chat/reasoning_split.h"
#include "grammar/grammar.h"
#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"
#include "sampling/token_constraint.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

// The vocabulary's trie, built once per tokenizer (the server's requests share it).
std::shared_ptr<const TokenTrie> token_trie_of(const Tokenizer& tokenizer);

class GrammarConstraint final : public TokenConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                    ReasoningStart start = ReasoningStart::None);
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<GrammarConstraint>(*this); }
  bool allowed(TokenMask& mask) const override;
  bool allows(int32_t id) const override;
  void accept(int32_t id) override;
  std::string describe() const override;

 private:
  enum class Phase { MayOpen, Reasoning, Answer };
  GrammarState state_;
  std::shared_ptr<const TokenTrie> trie_;
  Phase phase_;
  std::string tail_;     // Reasoning: the text's end, where "</think>" is looked for
  std::string written_;  // Answer: the last bytes matched (for the error's text)
};

}  // namespace r1pi
