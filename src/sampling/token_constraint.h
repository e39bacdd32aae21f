// A rule the generated tokens must follow (constrained decoding: a grammar, a JSON schema, a forced
// tool call), as the generation loop sees it: the ids it allows next, and its state moved on by
// each chosen token. A copy is taken to check a speculative draft without moving the real state.
// The mask decides nothing about which allowed token wins (that stays the sampler's), so a
// constrained answer is as exact as a free one: the same ids on any rank count, batch or --spec.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "sampling/token_rule.h"

namespace r1pi {

class TokenConstraint : public TokenRule {
 public:
  virtual std::unique_ptr<TokenConstraint> clone() const = 0;
  // Moves on by a chosen id (one allowed() allowed).
  virtual void accept(int32_t id) = 0;
  // Text the loop should know when the rule cannot go on (for the error).
  virtual std::string describe() const = 0;
};

}  // namespace r1pi
