// How many tokens to draft: the k that maximises the expected tokens per unit of forward time,
//   value(k) = (1 + E[accepted | k]) / c(1 + k),   E[accepted | k] = sum_{j<=k} prod_{i<=j} q_i,
// where q_i is the running estimate of P(draft position i is accepted | positions before it were),
// kept per matched n-gram length (a long match predicts better than a short one). A position never
// tried yet is taken to be as good as the one before it (else a draft that never grew past k
// would never learn that k + 1 pays), and a draft accepted whole lifts the estimate of the
// position after it toward its last one's (else one old rejection there would stay). Plain decoding
// is value(0) = 1: a draft is made only when some k beats it. While nothing pays, one token is
// drafted every probe_interval() steps, so that a passage that turns repetitive is noticed; the
// interval is long enough that failed probes cost at most kProbeBudget of the decoding time.
#pragma once
#include <vector>

#include "specdec/cost_curve.h"

namespace r1pi {

class DraftPolicy {
 public:
  static constexpr int kMinProbeInterval = 16;
  static constexpr double kProbeBudget = 0.005;  // (c(2) - 1) / interval
  static constexpr double kPrior = 0.5;    // q_i before anything is seen: worth a first try
  static constexpr double kRate = 0.15;    // weight of the newest observation in q_i

  // max_draft: the longest draft (also capped by the cost curve); n-gram lengths min_n..max_n.
  DraftPolicy(CostCurve cost, int max_draft, int min_n, int max_n);
  const CostCurve& cost() const { return cost_; }
  // k for a draft that continues a match of n tokens, at most limit (0: plain decoding).
  int choose(int n, int limit);
  // After verification: of the drafted tokens, the first `accepted` were the model's own picks.
  void record(int n, int drafted, int accepted);
  double value(int n, int k) const;
  double acceptance(int n, int position) const;
  int probe_interval() const { return probe_interval_; }

 private:
  CostCurve cost_;
  int max_draft_, min_n_;
  std::vector<std::vector<double>> q_;     // q_[n - min_n][i - 1]
  std::vector<std::vector<bool>> tried_;   // whether q_[n - min_n][i - 1] has seen a draft
  int probe_interval_;
  int idle_steps_ = 0;                     // steps since the last draft
};

}  // namespace r1pi
