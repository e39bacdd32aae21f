#include "specdec/ngram_index.h"

#include <algorithm>

#include "common/error.h"

namespace r1pi {

namespace {
// One step of the suffix hash: the hash of the n + 1 last tokens from that of the n last ones
// and the token before them (so every length costs one step, read from the end backwards).
uint64_t extend(uint64_t h, int32_t token) {
  h ^= uint64_t(uint32_t(token)) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}
}  // namespace

NgramIndex::NgramIndex(int min_n, int max_n) : min_n_(min_n), max_n_(max_n) {
  if (min_n < 1 || max_n < min_n)
    throw Error("n-gram lengths " + std::to_string(min_n) + ":" + std::to_string(max_n) +
                ": give 1 <= MIN <= MAX");
  by_length_.resize(size_t(max_n - min_n + 1));
  previous_end_.assign(by_length_.size(), -1);
}

void NgramIndex::push(int32_t token) {
  history_.push_back(token);
  const int last = int(history_.size()) - 1;
  uint64_t h = 0;
  for (int n = 1; n <= max_n_; ++n) {
    if (n > last + 1) {
      std::fill(previous_end_.begin() + std::max(0, n - min_n_), previous_end_.end(), -1);
      break;
    }
    h = extend(h, history_[size_t(last - n + 1)]);
    if (n < min_n_) continue;
    auto [it, inserted] = by_length_[size_t(n - min_n_)].try_emplace(h, last);
    int previous = -1;
    if (!inserted) {
      // Two n-grams may share a hash: the earlier one counts only if its tokens are these.
      const int end = it->second;
      if (std::equal(history_.begin() + (end - n + 1), history_.begin() + end + 1,
                     history_.begin() + (last - n + 1)))
        previous = end;
      it->second = last;
    }
    previous_end_[size_t(n - min_n_)] = previous;
  }
}

NgramMatch NgramIndex::match() const {
  for (int n = max_n_; n >= min_n_; --n)
    if (previous_end_[size_t(n - min_n_)] >= 0) return {n, previous_end_[size_t(n - min_n_)]};
  return {};
}

std::vector<int32_t> NgramIndex::continuation(const NgramMatch& match, int k) const {
  std::vector<int32_t> draft;
  if (match.n == 0) return draft;
  const int last = int(history_.size()) - 1;
  for (int j = 0; j < k; ++j) {
    const int from = match.end + 1 + j;
    draft.push_back(from <= last ? history_[size_t(from)] : draft[size_t(from - last - 1)]);
  }
  return draft;
}

}  // namespace r1pi
