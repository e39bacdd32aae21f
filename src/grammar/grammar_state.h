// A match of a grammar in progress over UTF-8 bytes: what constrained decoding keeps per sequence.
// A plain value: copy it to try a draft (speculative decoding) without touching the original.
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/parse_stacks.h"

namespace r1pi {

class GrammarState {
 public:
  // At the start of the grammar's root rule.
  explicit GrammarState(std::shared_ptr<const Grammar> grammar);

  // Advances over bytes when the grammar allows all of them from here, and returns true; else
  // returns false and leaves the state as it was. Bytes may end inside a UTF-8 character: they
  // are allowed when some completion of that character could be matched.
  [[nodiscard]] bool accept(std::string_view bytes);
  // Whether the text so far is a complete match (no partial character pending).
  bool can_end() const { return partial_.remaining == 0 && stacks_complete(stacks_); }

  const Grammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const Grammar>& grammar_ptr() const { return grammar_; }
  // The matcher's inside, for the token mask (token_mask.h).
  const StackSet& stacks() const { return stacks_; }
  const Utf8Partial& partial() const { return partial_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  StackSet stacks_;
  Utf8Partial partial_;
};

}  // namespace r1pi
