// How the layer code combines the partial results of several ranks. The forward pass calls it
// twice per layer (after wo and after w2); the logits stay split by vocabulary rows (the ranks
// choose the next token together). With one rank nothing happens.
#pragma once
#include <cstdint>

namespace r1pi {

class ShardSync {
 public:
  virtual ~ShardSync() = default;
  // x holds B rows of n floats: this rank's partial sums. Afterwards every rank holds the same
  // combined rows.
  virtual void reduce_sum(float* x, int B, int64_t n) = 0;
};

// One rank: its partial sum is the whole sum.
class NoSync final : public ShardSync {
 public:
  void reduce_sum(float*, int, int64_t) override {}
};

}  // namespace r1pi
