#include "specdec/speculator.h"

namespace r1pi {

Speculator::Speculator(const SpecOptions& options)
    : index_(options.min_ngram, options.max_ngram),
      policy_(options.cost, options.max_draft, options.min_ngram, options.max_ngram) {}

std::vector<int32_t> Speculator::draft(int limit) {
  const NgramMatch match = index_.match();
  last_n_ = match.n;
  if (match.n == 0) return {};
  return index_.continuation(match, policy_.choose(match.n, limit));
}

void Speculator::record(int drafted, int accepted) { policy_.record(last_n_, drafted, accepted); }

}  // namespace r1pi
