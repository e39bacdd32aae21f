#include "common/json_string.h"

namespace r1pi {

void append_json_string(std::string& out, std::string_view s) {
  // The characters with a short escape, and the letter each is written with after the backslash.
  static constexpr std::string_view kShort = "\"\\\n\r\t\b\f", kLetters = "\"\\nrtbf";
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (const size_t k = kShort.find(c); k != std::string_view::npos) {
      out += '\\';
      out += kLetters[k];
    } else if (byte < 0x20) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace r1pi
