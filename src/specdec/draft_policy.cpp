#include "specdec/draft_policy.h"

#include <algorithm>
#include <cmath>

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

double DraftPolicy::acceptance(int n, int position) const {
  const size_t row = size_t(n - min_n_);
  int i = position - 1;
  while (i > 0 && seen_[row][size_t(i)] == 0) --i;
  return seen_[row][size_t(i)] > 0 ? q_[row][size_t(i)] : kPrior;
}

int DraftPolicy::probe_interval(int n) const {
  if (cost_.max_batch() < 2) return kMinProbeInterval;
  const bool observed = n >= min_n_ && n - min_n_ < int(q_.size()) && seen_[size_t(n - min_n_)][0] > 0;
  const double q1 = observed ? q_[size_t(n - min_n_)][0] : 0.0;
  const double loss = cost_.at(2) - 1 - q1;
  return std::max(kMinProbeInterval, int(std::ceil(loss / kProbeBudget - 1e-9)));
}

double DraftPolicy::value(int n, int k) const {
  double expected = 0, all_accepted = 1;
  for (int i = 1; i <= k; ++i) {
    all_accepted *= acceptance(n, i);
    expected += all_accepted;
  }
  return (1 + expected) / cost_.at(1 + k);
}

int DraftPolicy::choose(int n, int limit) {
  if (n < min_n_ || n - min_n_ >= int(q_.size())) return 0;
  limit = std::min(limit, max_draft_);
  if (limit <= 0) return 0;
  int best = 0;
  double best_value = 1.0;
  for (int k = 1; k <= limit; ++k) {
    const double v = value(n, k);
    if (v > best_value) best = k, best_value = v;
  }
  probing_ = best == 0 && (probe_again_ || ++idle_steps_ >= probe_interval(n));
  probe_again_ = false;
  if (probing_) best = 1;
  if (best > 0) idle_steps_ = 0;
  return best;
}

void DraftPolicy::record(int n, int drafted, int accepted) {
  if (n < min_n_ || n - min_n_ >= int(q_.size())) return;
  probe_again_ = probing_ && drafted >= 1 && accepted == drafted && cost_.max_batch() >= 2 &&
                 cost_.at(2) < 2;
  probing_ = false;
  std::vector<double>& q = q_[size_t(n - min_n_)];
  // Position i was tried only if every earlier one was accepted: positions past the first
  // rejection say nothing about their own odds.
  std::vector<int>& seen = seen_[size_t(n - min_n_)];
  for (int i = 1; i <= std::min(drafted, accepted + 1) && i <= int(q.size()); ++i) {
    const double observed = i <= accepted ? 1.0 : 0.0;
    // Position 1 starts from the prior, a later position from the estimate of the one before it;
    // either counts as one observation, so that one accepted draft makes 3/4 of a 1/2 prior, not
    // a certainty (after one lucky probe in sampled text, the next draft was as long as the cost
    // curve allows, and all of it was rejected).
    if (seen[size_t(i - 1)] == 0 && i > 1) q[size_t(i - 1)] = acceptance(n, i);
    const int count = seen[size_t(i - 1)] = std::min(seen[size_t(i - 1)] + 1, 1 << 20);
    q[size_t(i - 1)] += std::max(kRate, 1.0 / (count + 1)) * (observed - q[size_t(i - 1)]);
  }
  // A draft accepted whole says nothing of the position after it, whose estimate may be low from
  // one rejection long ago: a draft that never reaches it again would never correct it. Text
  // that keeps being accepted to the end of the draft probably goes on as it did, so that
  // position moves toward the last one's estimate, and the drafts grow again where they pay.
  const int next = drafted + 1;
  if (drafted >= 1 && accepted == drafted && next <= int(q.size()) && seen[size_t(next - 1)] > 0)
    q[size_t(next - 1)] += kRate * std::max(0.0, q[size_t(drafted - 1)] - q[size_t(next - 1)]);
}

}  // namespace r1pi
