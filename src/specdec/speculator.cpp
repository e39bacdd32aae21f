#include "specdec/speculator.h"

namespace r1pi {

Speculator::Speculator(const SpecOptions& options)
    : index_(options.min_ngram, options.max_ngram),
      policy_(options.cost, options.max_draft, options.min_ngram, options.max_ngram) {}

void Speculator::push(int32_t token) {
  index_.push(token);
  if (shadow_.empty()) return;
  const bool accepted = token == shadow_[shadow_matched_];
  if (accepted && ++shadow_matched_ < shadow_.size()) return;
  // The shadow ends: one draft's evidence at once, as a verification gives it (observed token by
  // token, the first confirmed position of a text that only now and then repeats itself already
  // set off a draft). The positions a verification covered are its record's.
  const size_t last = accepted ? shadow_matched_ : shadow_matched_ + 1;
  for (size_t i = shadow_verified_ + 1; i <= last; ++i)
    policy_.observe(shadow_n_, int(i), i <= shadow_matched_);
  shadow_.clear();
}

std::vector<int32_t> Speculator::draft(int limit) {
  const NgramMatch match = index_.match();
  last_n_ = match.n;
  if (match.n == 0) return {};
  const int k = policy_.choose(match.n, limit);
  if (shadow_.empty()) {
    shadow_ = index_.continuation(match, policy_.longest());
    shadow_n_ = match.n;
    shadow_matched_ = 0;
    shadow_verified_ = size_t(k);
  }
  return index_.continuation(match, k);
}

void Speculator::record(int drafted, int accepted) { policy_.record(last_n_, drafted, accepted); }

}  // namespace r1pi
