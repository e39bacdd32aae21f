// How many tokens to draft: the k that maximises the expected tokens per unit of forward time,
//   value(k) = (1 + E[accepted | k]) / c(1 + k),   E[accepted | k] = sum_{j<=k} prod_{i<=j} q_i,
// where q_i is the running estimate of P(draft position i is accepted | positions before it were),
// kept per matched n-gram length (a long match predicts better than a short one): the mean of
// its first observations and of a first guess that counts as one of them, then a moving average
// that forgets, so that two or three accepted drafts are enough where a batch is dear, and one is
// not taken for a certainty. The guess for a position never tried: the one before it's (else a
// draft that never grew past k would never learn that k + 1 pays); for position 1 of a match
// length never drafted, the nearest drafted length's (the same text), else the prior. A draft
// accepted whole lifts the estimate of the position after it toward its last one's (else one old
// rejection there would stay). Plain decoding is value(0) = 1: a draft is made only when some k
// beats it, and never before the first observation.
//
// The observations come from the verified drafts and, at no cost, from shadow drafts: the
// speculator (speculator.h) compares the continuation it could have drafted with the tokens that
// follow, past the positions it did draft, which is the same event as a verification (the model's
// pick at a position does not depend on whether it came in a batch). So the estimates follow the
// text while nothing is drafted, and a passage that turns repetitive is drafted on within a few
// tokens, without paying for probe drafts.
#pragma once
#include <cstddef>
#include <vector>

#include "specdec/cost_curve.h"

namespace r1pi {

class DraftPolicy {
 public:
  static constexpr double kPrior = 0.5;    // the first guess, before anything is seen
  static constexpr double kRate = 0.15;    // weight of the newest observation in q_i, at least

  // max_draft: the longest draft (also capped by the cost curve); n-gram lengths min_n..max_n.
  DraftPolicy(CostCurve cost, int max_draft, int min_n, int max_n);
  const CostCurve& cost() const { return cost_; }
  // The longest draft this policy can choose.
  int longest() const { return max_draft_; }
  // k for a draft that continues a match of n tokens, at most limit (0: plain decoding).
  int choose(int n, int limit) const;
  // A verified draft of `drafted` tokens after a match of n: its first `accepted` tokens were the
  // model's picks.
  void record(int n, int drafted, int accepted);
  // One position of a draft after a match of n, whose earlier positions were all accepted.
  void observe(int n, int position, bool accepted);
  double value(int n, int k) const;
  double acceptance(int n, int position) const;

 private:
  // The row of the match length nearest to row's (itself first, then the shorter) that has been
  // drafted, or -1.
  int nearest_drafted(size_t row) const;

  CostCurve cost_;
  int max_draft_, min_n_;
  std::vector<std::vector<double>> q_;     // q_[n - min_n][i - 1]
  std::vector<std::vector<int>> seen_;     // how many drafts q_[n - min_n][i - 1] has seen
};

}  // namespace r1pi
