#include "common/backslash_escapes.h"

#include <charconv>

namespace r1pi {

namespace {

// The byte that the two hex digits at hex stand for, or -1 (from_chars takes no sign or space).
int hex_byte(const char* hex) {
  unsigned value = 0;
  return std::from_chars(hex, hex + 2, value, 16).ptr == hex + 2 ? int(value) : -1;
}

// What `\c` stands for (0: not one of the single-letter escapes).
char named_escape(char c) {
  switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case '\\': case '"': case '\'': return c;
    default: return 0;
  }
}

}  // namespace

std::string backslash_escapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[i + 1];
    if (const char named = named_escape(next)) {
      out += named;
      ++i;
    } else if (next == 'x' && i + 3 < text.size() && hex_byte(&text[i + 2]) >= 0) {
      out += char(hex_byte(&text[i + 2]));
      i += 3;
    } else {
      out += text[i];  // the backslash; what follows is copied as it is on the next turn
    }
  }
  return out;
}

}  // namespace r1pi
