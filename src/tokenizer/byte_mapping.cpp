#include "tokenizer/byte_mapping.h"

#include <array>

#include "tokenizer/utf8.h"

namespace r1pi::byte_mapping {
namespace {

struct Tables {
  std::array<std::string, 256> text;        // byte -> UTF-8 of its character
  std::array<int16_t, 512> byte_of_code{};  // code point (< 512) -> byte, or -1

  Tables() {
    byte_of_code.fill(-1);
    // Printable Latin-1 bytes stand for themselves; the other 68 bytes (controls, space, DEL,
    // NBSP, soft hyphen) take the code points from U+0100 upwards, in byte order.
    uint32_t next_free = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t code = printable ? b : next_free++;
      utf8::append(text[b], code);
      byte_of_code[code] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

}  // namespace

const std::string& to_text(uint8_t byte) { return tables().text[byte]; }

std::string encode(std::string_view raw) {
  const Tables& t = tables();
  std::string out;
  out.reserve(raw.size() * 2);
  for (char c : raw) out += t.text[static_cast<uint8_t>(c)];
  return out;
}

std::string decode(std::string_view mapped) {
  const Tables& t = tables();
  std::string out;
  out.reserve(mapped.size());
  for (size_t pos = 0; pos < mapped.size();) {
    const size_t n = utf8::char_length(mapped, pos);
    // An invalid byte decodes as its own value, which below 256 maps to itself or to nothing:
    // either way the byte is kept.
    const uint32_t code = utf8::decode(mapped, pos);
    if (code < t.byte_of_code.size() && t.byte_of_code[code] >= 0) {
      out += static_cast<char>(t.byte_of_code[code]);
    } else {
      out.append(mapped.substr(pos, n));
    }
    pos += n;
  }
  return out;
}

}  // namespace r1pi::byte_mapping
