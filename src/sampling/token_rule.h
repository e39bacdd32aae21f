// What a pick asks of the rule on its row (a grammar's state at that row): whether one id may
// come, or every id's answer at once as a mask. The one-id question is cheap; the mask walks a
// 128k-token trie (up to milliseconds in free text), so a pick asks for it only when its answer
// can change the pick (Sampler::pick_from_row).
#pragma once
#include <cstdint>
#include <vector>

namespace r1pi {

// The ids a rule allows at one step: bit id of words[id / 64].
using TokenMask = std::vector<uint64_t>;
inline bool mask_allows(const TokenMask& m, int32_t id) { return (m[size_t(id) >> 6] >> (id & 63)) & 1; }

class TokenRule {
 public:
  virtual ~TokenRule() = default;
  // The ids allowed next, as n_vocab bits (end-of-generation ids where the rule may end here);
  // left empty where the rule does not apply at this step (every id allowed, no mask to apply).
  // False when none is allowed: the rule cannot be followed from here.
  virtual bool allowed(TokenMask& mask) const = 0;
  // Whether id may come next.
  virtual bool allows(int32_t id) const = 0;
};

}  // namespace r1pi
