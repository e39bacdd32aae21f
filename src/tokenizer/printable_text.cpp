#include "tokenizer/printable_text.h"

#include <cstdio>

#include "tokenizer/utf8.h"

namespace r1pi {

std::string printable_text(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char escaped[16];
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = utf8::char_length(text, pos);
    const uint32_t c = utf8::decode(text, pos);
    const bool invalid = n == 1 && static_cast<unsigned char>(text[pos]) >= 0x80;
    const bool control = c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0);
    const bool kept = (c == '\t') || (c == '\n' && keep_newlines);
    if (invalid || (control && !kept)) {
      for (size_t i = pos; i < pos + n; ++i) {  // a C1 control is two bytes
        std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
        out += escaped;
      }
    } else if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
      std::snprintf(escaped, sizeof escaped, "\\u{%04x}", c);
      out += escaped;
    } else {
      out.append(text.substr(pos, n));
    }
    pos += n;
  }
  return out;
}

}  // namespace r1pi
