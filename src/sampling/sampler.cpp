#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

#include "neon/kernels.h"

namespace r1pi {

int32_t argmax(const float* logits, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;
  return int32_t(best);
}

std::vector<Candidate> top_candidates(const float* logits, int64_t n, int k, int32_t first_id) {
  std::vector<Candidate> c(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) c[i] = {logits[i], int32_t(first_id + i)};
  if (k > 0 && k < n) {
    std::partial_sort(c.begin(), c.begin() + k, c.end(), candidate_before);
    c.resize(size_t(k));
  } else {
    std::sort(c.begin(), c.end(), candidate_before);
  }
  return c;
}

// splitmix64: tiny, fast, the same numbers on every platform, and its n-th output needs no state:
// the stream's state after n steps is seed + n * gamma.
double uniform_at(uint64_t seed, int64_t position) {
  uint64_t z = seed + (uint64_t(position) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

int32_t Sampler::sample(const float* logits, int64_t n, int64_t position) const {
  if (greedy()) return argmax(logits, n);
  return sample_from(top_candidates(logits, n, params_.top_k), position);
}

int32_t Sampler::sample_from(const std::vector<Candidate>& candidates, int64_t position) const {
  size_t keep = candidates.size();
  // Softmax at the temperature, with r1pi's exp so every platform gets the same probabilities.
  std::vector<double> p(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) {
    p[i] = expf_r1pi((candidates[i].logit - candidates[0].logit) / params_.temperature);
    sum += p[i];
  }
  // Nucleus: the smallest prefix whose probability reaches top_p (at least one token).
  if (params_.top_p < 1.0f) {
    double cum = 0;
    for (size_t i = 0; i < keep; ++i) {
      cum += p[i] / sum;
      if (cum >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  // min-p: the candidates whose probability at the temperature is at least min_p times the top
  // one's (p[0] is 1: the softmax above is taken relative to the top logit). Candidates are in
  // descending order, so this is a prefix: it depends on rank 0's candidate list only, which is
  // the single-rank one on any rank count.
  if (params_.min_p > 0.0f)
    while (keep > 1 && p[keep - 1] < double(params_.min_p)) --keep;
  if (keep < candidates.size()) {
    sum = 0;
    for (size_t i = 0; i < keep; ++i) sum += p[i];
  }
  double r = uniform_at(params_.seed, position) * sum;
  for (size_t i = 0; i < keep; ++i) {
    r -= p[i];
    if (r < 0) return candidates[i].id;
  }
  return candidates[keep - 1].id;
}

namespace {

// log-softmax at temperature 1 of the row: the chosen id's and the n most likely. Summed in double
// in id order over r1pi's exp, so every platform and rank count gives the same figures.
PickLogprobs logprobs_of(const float* logits, int64_t n, int32_t chosen, int n_probs) {
  float top = -INFINITY;
  for (int64_t i = 0; i < n; ++i) top = std::max(top, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += logits[i] == -INFINITY ? 0.0 : double(expf_r1pi(logits[i] - top));
  const double log_sum = std::log(sum);
  auto logprob = [&](int32_t id) { return float(double(logits[id] - top) - log_sum); };
  PickLogprobs out;
  out.chosen = {chosen, logprob(chosen)};
  for (const Candidate& c : top_candidates(logits, n, std::min<int64_t>(n_probs, n)))
    if (int64_t(out.top.size()) < n_probs) out.top.push_back({c.id, logprob(c.id)});
  return out;
}

}  // namespace

int Sampler::rule_candidates(int64_t n) const {
  const int k = greedy() ? 1 : params_.top_k;
  return k > 0 && k < n ? k : 0;
}

// The best candidates of the row are also the best candidates of the masked row when the rule
// allows them all (the mask only lowers refused ids to -inf), so the same draw picks the same id.
// (A candidate at -inf could tie with refused ids that the mask lowers.)
std::optional<int32_t> Sampler::pick_if_allowed(const std::vector<Candidate>& best, int64_t position) const {
  for (const Candidate& c : best)
    if (!(c.logit > -INFINITY) || !rule_->allows(c.id)) return std::nullopt;
  return greedy() ? best.at(0).id : sample_from(best, position);
}

// The pick from a processed row under a rule, asking for the rule's whole mask only where it can
// change the pick.
int32_t Sampler::pick_under_rule(const float* row, int64_t n, int64_t position) const {
  if (const int k = rule_candidates(n)) {
    std::vector<Candidate> best;
    if (greedy()) {
      const int32_t id = argmax(row, n);
      best.push_back({row[id], id});
    } else {
      best = top_candidates(row, n, k);
    }
    if (const std::optional<int32_t> id = pick_if_allowed(best, position)) return *id;
  }
  TokenMask mask;
  if (!rule_->allowed(mask) || mask.empty()) return sample(row, n, position);
  std::vector<float> masked(row, row + n);
  for (int64_t i = 0; i < n; ++i)
    if (!mask_allows(mask, int32_t(i))) masked[size_t(i)] = -INFINITY;
  return sample(masked.data(), n, position);
}

int32_t Sampler::pick_from_row(const float* logits, int64_t n, int64_t position, const int32_t* history,
                               size_t n_history) const {
  std::vector<float> row;
  if (params_.penalties.active() || !params_.logit_bias.empty()) {
    row.assign(logits, logits + n);
    apply_penalties(row.data(), n, 0, history, n_history, params_.penalties);
    for (const auto& [id, bias] : params_.logit_bias)
      if (id >= 0 && id < n) row[size_t(id)] += bias;
    logits = row.data();
  }
  const int32_t chosen = rule_ ? pick_under_rule(logits, n, position) : sample(logits, n, position);
  // The model's weights for the report: the row before the rule's cut.
  if (logprobs_ && params_.n_probs >= 0) *logprobs_ = logprobs_of(logits, n, chosen, params_.n_probs);
  return chosen;
}

}  // namespace r1pi
