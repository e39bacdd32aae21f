// How many tokens to draft: the k that maximises the expected tokens per unit of forward time,
//   value(k) = (1 + E[accepted | k]) / c(1 + k),   E[accepted | k] = sum_{j<=k} prod_{i<=j} q_i,
// where q_i is the running estimate of P(draft position i is accepted | positions before it were),
// kept per matched n-gram length (a long match predicts better than a short one): the mean of
// its first observations and of a first estimate that counts as one of them (the prior for
// position 1, the estimate of the position before for a later one), then a moving average that
// forgets, so that two or three accepted drafts are enough where a batch is dear, and one is
// not taken for a certainty. A position never tried yet is taken to be as good as the one before it (else a
// draft that never grew past k would never learn that k + 1 pays), and a draft accepted whole
// lifts the estimate of the position after it toward its last one's (else one old rejection there
// would stay). Plain decoding is value(0) = 1: a draft is made only when some k beats it.
// While nothing pays, one token is drafted now and then (a probe), so that a passage that turns
// repetitive is noticed. A probe loses c(2) - 1 - q_1 of a step in expectation (its forward's
// extra cost less the token it may gain), and probes come far enough apart that this is at most
// kProbeBudget of the decoding time: every (c(2) - 1) / kProbeBudget steps where nothing has been
// accepted or nothing tried (the prior is no evidence; 100+ steps where c(2) is near 2), sooner as
// the observed q_1 nears the break-even c(2) - 1, never closer than kMinProbeInterval. A probe
// accepted whole is followed at once by another, as long as a certain draft of one pays
// (c(2) < 2): each accepted probe is then a gain in itself, and a run of them ends with at most
// one failure.
#pragma once
#include <vector>

#include "specdec/cost_curve.h"

namespace r1pi {

class DraftPolicy {
 public:
  static constexpr int kMinProbeInterval = 16;
  static constexpr double kProbeBudget = 0.005;  // expected loss of a probe / interval
  static constexpr double kPrior = 0.5;    // q_i before anything is seen: worth a first try
  static constexpr double kRate = 0.15;    // weight of the newest observation in q_i, at least

  // max_draft: the longest draft (also capped by the cost curve); n-gram lengths min_n..max_n.
  DraftPolicy(CostCurve cost, int max_draft, int min_n, int max_n);
  const CostCurve& cost() const { return cost_; }
  // k for a draft that continues a match of n tokens, at most limit (0: plain decoding).
  int choose(int n, int limit);
  // After verification: of the drafted tokens, the first `accepted` were the model's own picks.
  void record(int n, int drafted, int accepted);
  double value(int n, int k) const;
  double acceptance(int n, int position) const;
  // Steps between probes where the matched n-gram length is n (without n: as if nothing had
  // ever been accepted, the longest).
  int probe_interval(int n = 0) const;

 private:
  CostCurve cost_;
  int max_draft_, min_n_;
  std::vector<std::vector<double>> q_;     // q_[n - min_n][i - 1]
  std::vector<std::vector<int>> seen_;     // how many drafts q_[n - min_n][i - 1] has seen
  int idle_steps_ = 0;                     // steps since the last draft
  bool probing_ = false;                   // the last draft was a probe
  bool probe_again_ = false;               // ... and it was accepted: probe at the next step
};

}  // namespace r1pi
