// A set of Unicode code points as sorted, disjoint, non-adjacent ranges: what one GBNF character
// element ("a", [a-z], [^"\\], .) matches. Negation is resolved when the set is built, so matching
// never has to know about it.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace r1pi {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CharSet {
 public:
  using Range = std::pair<uint32_t, uint32_t>;  // inclusive

  CharSet() = default;
  // Any order, overlaps allowed; negate: the complement within [0, kMaxCodePoint].
  CharSet(std::vector<Range> ranges, bool negate);
  static CharSet any() { return CharSet({{0, kMaxCodePoint}}, false); }

  bool contains(uint32_t cp) const {
    if (cp < 128) return (ascii_[cp >> 6] >> (cp & 63)) & 1;
    for (const Range& r : ranges_)
      if (cp >= r.first && cp <= r.second) return true;
    return false;
  }
  // Whether some code point in [lo, hi] is in the set (a partial UTF-8 character can still match).
  bool intersects(uint32_t lo, uint32_t hi) const {
    for (const Range& r : ranges_)
      if (r.first <= hi && lo <= r.second) return true;
    return false;
  }
  // Whether every code point in [lo, hi] is in the set (ranges are merged: one range holds them).
  bool covers(uint32_t lo, uint32_t hi) const {
    for (const Range& r : ranges_)
      if (r.first <= lo && hi <= r.second) return true;
    return false;
  }
  const std::vector<Range>& ranges() const { return ranges_; }
  bool operator==(const CharSet& o) const { return ranges_ == o.ranges_; }

 private:
  std::vector<Range> ranges_;
  uint64_t ascii_[2] = {0, 0};  // the ASCII part as a bitmap: most grammar characters are ASCII
};

}  // namespace r1pi
