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
  tried_.assign(q_.size(), std::vector<bool>(q_[0].size(), false));
  const double probe_cost = cost_.max_batch() >= 2 ? cost_.at(2) - 1 : 0;
  probe_interval_ = std::max(kMinProbeInterval, int(std::ceil(probe_cost / kProbeBudget - 1e-9)));
}

double DraftPolicy::acceptance(int n, int position) const {
  const size_t row = size_t(n - min_n_);
  int i = position - 1;
  while (i > 0 && !tried_[row][size_t(i)]) --i;
  return tried_[row][size_t(i)] ? q_[row][size_t(i)] : kPrior;
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
  if (best == 0 && ++idle_steps_ >= probe_interval_) best = 1;
  if (best > 0) idle_steps_ = 0;
  return best;
}

void DraftPolicy::record(int n, int drafted, int accepted) {
  if (n < min_n_ || n - min_n_ >= int(q_.size())) return;
  std::vector<double>& q = q_[size_t(n - min_n_)];
  // Position i was tried only if every earlier one was accepted: positions past the first
  // rejection say nothing about their own odds.
  for (int i = 1; i <= std::min(drafted, accepted + 1) && i <= int(q.size()); ++i) {
    const double seen = i <= accepted ? 1.0 : 0.0;
    if (!tried_[size_t(n - min_n_)][size_t(i - 1)]) q[size_t(i - 1)] = acceptance(n, i);
    tried_[size_t(n - min_n_)][size_t(i - 1)] = true;
    q[size_t(i - 1)] += kRate * (seen - q[size_t(i - 1)]);
  }
  // A draft accepted whole says nothing of the position after it, whose estimate may be low from
  // one rejection long ago: a draft that never reaches it again would never correct it. Text
  // that keeps being accepted to the end of the draft probably goes on as it did, so that
  // position moves toward the last one's estimate, and the drafts grow again where they pay.
  const int next = drafted + 1;
  const std::vector<bool>& tried = tried_[size_t(n - min_n_)];
  if (drafted >= 1 && accepted == drafted && next <= int(q.size()) && tried[size_t(next - 1)])
    q[size_t(next - 1)] += kRate * std::max(0.0, q[size_t(drafted - 1)] - q[size_t(next - 1)]);
}

}  // namespace r1pi
