#include "grammar/json_string_chars.h"

#include <cstdio>
#include <vector>

#include "grammar/gbnf_text.h"

namespace r1pi {

std::string json_string_chars(const CharSet& set) {
  // Plain: everything JSON lets stand for itself (not '"', '\\' or a control character).
  std::vector<CharSet::Range> plain;
  for (const CharSet::Range& r : set.ranges()) {
    for (const CharSet::Range& p : {CharSet::Range{0x20, 0x21}, CharSet::Range{0x23, 0x5B},
                                     CharSet::Range{0x5D, kMaxCodePoint}}) {
      const uint32_t lo = std::max(r.first, p.first), hi = std::min(r.second, p.second);
      if (lo <= hi) plain.push_back({lo, hi});
    }
  }
  std::vector<std::string> alternatives;
  if (!plain.empty()) alternatives.push_back(gbnf_class(CharSet(plain, false)));
  for (uint32_t cp : {uint32_t('"'), uint32_t('\\')})
    if (set.contains(cp)) alternatives.push_back(gbnf_literal(std::string("\\") + char(cp)));
  for (uint32_t cp = 0; cp < 0x20; ++cp) {
    if (!set.contains(cp)) continue;
    const char* short_form = cp == '\b' ? "\\b" : cp == '\f' ? "\\f" : cp == '\n' ? "\\n" : cp == '\r' ? "\\r"
                             : cp == '\t' ? "\\t" : nullptr;
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    alternatives.push_back(gbnf_literal(short_form ? short_form : buf));
  }
  if (alternatives.size() == 1) return alternatives[0];
  std::string out;
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "(") + alternatives[i];
  return alternatives.empty() ? "" : out + ")";
}

}  // namespace r1pi
