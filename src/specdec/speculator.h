// Speculative decoding on rank 0: the n-gram index over the history proposes a continuation, the
// cost-aware policy decides how much of it is worth verifying, and the verification's outcome
// feeds back into the policy. What is accepted is decided by the model alone (the generation
// loop keeps the longest prefix of the draft equal to the model's own picks), so none of this
// can change the output, only how many forward passes it takes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "specdec/cost_curve.h"
#include "specdec/draft_policy.h"
#include "specdec/ngram_index.h"

namespace r1pi {

struct SpecOptions {
  bool enabled = false;
  int max_draft = 8;    // --spec-max
  int min_ngram = 1;    // --spec-ngram MIN:MAX
  int max_ngram = 4;
  CostCurve cost;       // c(B), measured or from --spec-cost
  std::string cost_origin;  // where it came from (for the summary)
};

struct SpecStats {
  int drafted = 0;      // draft tokens verified
  int accepted = 0;     // of them, equal to the model's picks
  int steps = 0;        // decode forwards, with or without a draft
  double cost = 0;      // those forwards' time by the cost curve, in units of a 1-token forward
};

class Speculator {
 public:
  explicit Speculator(const SpecOptions& options);
  void push(int32_t token) { index_.push(token); }
  // A draft of at most limit tokens to follow the history (empty: decode one token plainly).
  std::vector<int32_t> draft(int limit);
  // The model's verdict on the last draft: its first `accepted` tokens were the model's picks.
  void record(int drafted, int accepted);
  const DraftPolicy& policy() const { return policy_; }

 private:
  NgramIndex index_;
  DraftPolicy policy_;
  int last_n_ = 0;
};

}  // namespace r1pi
