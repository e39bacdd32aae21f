#include "grammar/char_set.h"

#include <algorithm>

namespace r1pi {

CharSet::CharSet(std::vector<Range> ranges, bool negate) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> merged;
  for (const Range& r : ranges) {
    if (r.first > r.second) continue;
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  if (negate) {
    std::vector<Range> complement;
    uint32_t next = 0;
    for (const Range& r : merged) {
      if (r.first > next) complement.push_back({next, r.first - 1});
      next = r.second + 1;
    }
    if (next <= kMaxCodePoint) complement.push_back({next, kMaxCodePoint});
    merged = std::move(complement);
  }
  ranges_ = std::move(merged);
  for (const Range& r : ranges_)
    for (uint32_t cp = r.first; cp <= std::min<uint32_t>(r.second, 127); ++cp)
      ascii_[cp >> 6] |= uint64_t(1) << (cp & 63);
}

}  // namespace r1pi
