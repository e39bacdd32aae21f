#include "specdec/draft_policy.h"

#include <algorithm>

#include "common/error.h"

namespace r1pi {

DraftPolicy::DraftPolicy(CostCurve cost, int max_draft, int min_n, int max_n)
    : cost_(std::move(cost)), max_draft_(std::min(max_draft, cost_.max_batch() - 1)), min_n_(min_n) {
  if (cost_.empty()) throw Error("speculative decoding needs a cost curve");
  if (max_draft < 1) throw Error("--spec-max " + std::to_string(max_draft) + ": give at least 1");
  max_draft_ = std::max(max_draft_, 0);
  q_.assign(size_t(max_n - min_n + 1), std::vector<double>(size_t(std::max(max_draft_, 1)), kPrior));
  seen_.assign(q_.size(), std::vector<int>(q_[0].size(), 0));
}

int DraftPolicy::nearest_drafted(size_t row) const {
  const int rows = int(q_.size());
  for (int d = 0; d < rows; ++d)
    for (const int r : {int(row) - d, int(row) + d})
      if (r >= 0 && r < rows && seen_[size_t(r)][0] > 0) return r;
  return -1;
}

double DraftPolicy::acceptance(int n, int position) const {
  const size_t row = size_t(n - min_n_);
  int i = position - 1;
  while (i > 0 && seen_[row][size_t(i)] == 0) --i;
  if (seen_[row][size_t(i)] > 0) return q_[row][size_t(i)];
  // Position 1 of a match length never drafted: the text's acceptance so far is a better guess
  // than the prior, so the nearest length that has been drafted lends its estimate (the shorter
  // one first); else a text whose drafts all failed would try each length once more.
  const int r = nearest_drafted(row);
  return r >= 0 ? q_[size_t(r)][0] : kPrior;
}

double DraftPolicy::value(int n, int k) const {
  double expected = 0, all_accepted = 1;
  for (int i = 1; i <= k; ++i) {
    all_accepted *= acceptance(n, i);
    expected += all_accepted;
  }
  return (1 + expected) / cost_.at(1 + k);
}

int DraftPolicy::choose(int n, int limit) const {
  if (n < min_n_ || n - min_n_ >= int(q_.size())) return 0;
  // The prior is no evidence, and the first observation is free (a shadow): no draft before it.
  if (nearest_drafted(size_t(n - min_n_)) < 0) return 0;
  limit = std::min(limit, max_draft_);
  int best = 0;
  double best_value = 1.0;
  for (int k = 1; k <= limit; ++k) {
    const double v = value(n, k);
    if (v > best_value) best = k, best_value = v;
  }
  return best;
}

void DraftPolicy::observe(int n, int position, bool accepted) {
  if (n < min_n_ || n - min_n_ >= int(q_.size()) || position < 1 || position > int(q_[0].size())) return;
  double& q = q_[size_t(n - min_n_)][size_t(position - 1)];
  int& seen = seen_[size_t(n - min_n_)][size_t(position - 1)];
  // A position starts from the guess acceptance() made before it was seen (the prior, another
  // match length's estimate or the position before's), which counts as one observation: one
  // accepted draft makes 3/4 of a 1/2 prior, not a certainty (after one lucky draft in sampled
  // text, the next was as long as the cost curve allows, and all of it was rejected).
  if (seen == 0) q = acceptance(n, position);
  seen = std::min(seen + 1, 1 << 20);
  q += std::max(kRate, 1.0 / (seen + 1)) * ((accepted ? 1.0 : 0.0) - q);
}

void DraftPolicy::record(int n, int drafted, int accepted) {
  if (n < min_n_ || n - min_n_ >= int(q_.size())) return;
  // Position i was tried only if every earlier one was accepted: positions past the first
  // rejection say nothing about their own odds.
  for (int i = 1; i <= std::min(drafted, accepted + 1); ++i) observe(n, i, i <= accepted);
  std::vector<double>& q = q_[size_t(n - min_n_)];
  const std::vector<int>& seen = seen_[size_t(n - min_n_)];
  // A draft accepted whole says nothing of the position after it, whose estimate may be low from
  // one rejection long ago: a draft that never reaches it again would never correct it. Text
  // that keeps being accepted to the end of the draft probably goes on as it did, so that
  // position moves toward the last one's estimate, and the drafts grow again where they pay.
  const int next = drafted + 1;
  if (drafted >= 1 && accepted == drafted && next <= int(q.size()) && seen[size_t(next - 1)] > 0)
    q[size_t(next - 1)] += kRate * std::max(0.0, q[size_t(drafted - 1)] - q[size_t(next - 1)]);
}

}  // namespace r1pi
