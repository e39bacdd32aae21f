// The drafter's memory: the token history (prompt and generated text) and, for every n-gram length
// n in [min_n, max_n], where each n-gram last ended. Appending a token costs O(max_n) whatever the
// history's length. A draft continues the longest suffix of the history that occurred before
// (longest n first; among the occurrences of that n-gram, the most recent one).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace r1pi {

struct NgramMatch {
  int n = 0;      // length of the matched suffix; 0: the suffix never occurred before
  int end = -1;   // where its most recent earlier occurrence ended (an index into the history)
};

class NgramIndex {
 public:
  NgramIndex(int min_n, int max_n);
  int min_n() const { return min_n_; }
  int max_n() const { return max_n_; }
  void push(int32_t token);
  const std::vector<int32_t>& history() const { return history_; }
  // The longest suffix of the history (of min_n to max_n tokens) seen before, and where it was.
  NgramMatch match() const;
  // Up to k tokens that followed the match. When the match ends right before the suffix (a run
  // such as "a b a b a b"), what followed it is partly the draft itself: the draft then repeats
  // the period end..last, as the text would if the run goes on.
  std::vector<int32_t> continuation(const NgramMatch& match, int k) const;

 private:
  int min_n_, max_n_;
  std::vector<int32_t> history_;
  // by_length_[n - min_n]: hash of an n-gram -> the last index where it ended.
  std::vector<std::unordered_map<uint64_t, int>> by_length_;
  // previous_end_[n - min_n]: where the current suffix of length n ended before (-1: never).
  std::vector<int> previous_end_;
};

}  // namespace r1pi
