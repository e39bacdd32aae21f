#include "grammar/text_scan.h"

#include "tokenizer/utf8.h"

namespace r1pi {

std::optional<uint32_t> read_utf8_char(std::string_view text, size_t& pos) {
  const size_t n = utf8::char_length(text, pos);
  if (n == 1 && static_cast<unsigned char>(text[pos]) >= 0x80) return std::nullopt;
  const uint32_t cp = utf8::decode(text, pos);
  pos += n;
  return cp;
}

std::optional<uint32_t> read_hex(std::string_view text, size_t& pos, int digits) {
  uint32_t v = 0;
  for (int i = 0; i < digits; ++i, ++pos) {
    const char h = pos < text.size() ? text[pos] : '\0';
    const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + uint32_t(d);
  }
  return v;
}

}  // namespace r1pi
