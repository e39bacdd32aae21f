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

// At each step the continuation the index offers, as long as the policy's longest draft, is kept
// as a shadow and compared with the tokens that follow: at its first rejection or its end, each
// position past the ones drafted (all of them at a plain step) up to there is an observation for
// the policy as a verification's would be (position i given the earlier ones), at no cost. One
// shadow at a time, so that each is one draft's evidence.
class Speculator {
 public:
  explicit Speculator(const SpecOptions& options);
  // The next token of the history (the prompt's, then each one generated).
  void push(int32_t token);
  // A draft of at most limit tokens to follow the history (empty: decode one token plainly).
  std::vector<int32_t> draft(int limit);
  // The model's verdict on the last draft: its first `accepted` tokens were the model's picks.
  void record(int drafted, int accepted);
  const DraftPolicy& policy() const { return policy_; }

 private:
  NgramIndex index_;
  DraftPolicy policy_;
  int last_n_ = 0;
  std::vector<int32_t> shadow_;  // the draft not made (empty: none pending)
  int shadow_n_ = 0;             // its match length
  size_t shadow_matched_ = 0;    // how many of its tokens the text has confirmed
  size_t shadow_verified_ = 0;   // how many of them were drafted (the verification observes those)
};

}  // namespace r1pi
