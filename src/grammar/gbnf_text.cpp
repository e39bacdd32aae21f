#include "grammar/gbnf_text.h"

#include <cstdio>

namespace r1pi {
namespace {

// One code point as the parser reads it inside "..." or [...]: printable ASCII as is (with the
// characters either syntax treats specially escaped), everything else as a hex escape.
void append_code_point(std::string& out, uint32_t cp) {
  char buf[16];
  if (cp == '\n') {
    out += "\\n";
  } else if (cp == '\t') {
    out += "\\t";
  } else if (cp == '\r') {
    out += "\\r";
  } else if (cp == '"' || cp == '\\' || cp == ']' || cp == '[' || cp == '-' || cp == '^') {
    out += '\\';
    out += char(cp);
  } else if (cp >= 0x20 && cp < 0x7F) {
    out += char(cp);
  } else {
    std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02X" : cp < 0x10000 ? "\\u%04X" : "\\U%08X", cp);
    out += buf;
  }
}

}  // namespace

std::string gbnf_literal(std::string_view utf8) {
  std::string out = "\"";
  for (size_t i = 0; i < utf8.size();) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (n == 1) {
      append_code_point(out, c);
    } else {
      out.append(utf8.substr(i, n));  // the parser reads UTF-8 characters as they are
    }
    i += n;
  }
  return out + "\"";
}

std::string gbnf_class(const CharSet& set) {
  if (set == CharSet::any()) return ".";
  std::string out = "[";
  for (const CharSet::Range& r : set.ranges()) {
    append_code_point(out, r.first);
    if (r.second != r.first) {
      out += '-';
      append_code_point(out, r.second);
    }
  }
  return out + "]";
}

}  // namespace r1pi
