#include "tokenizer/utf8.h"

namespace r1pi::utf8 {
namespace {

bool is_continuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

// Expected sequence length from the lead byte; 0 for bytes that never lead (continuations,
// 0xC0/0xC1 which could only start overlong forms, 0xF5.. beyond U+10FFFF).
size_t expected_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Range allowed for the second byte, which is where overlong, surrogate and too-large forms show.
bool second_byte_ok(uint8_t lead, uint8_t second) {
  switch (lead) {
    case 0xE0: return second >= 0xA0 && second <= 0xBF;
    case 0xED: return second >= 0x80 && second <= 0x9F;
    case 0xF0: return second >= 0x90 && second <= 0xBF;
    case 0xF4: return second >= 0x80 && second <= 0x8F;
    default: return is_continuation(second);
  }
}

// How many bytes of text starting at pos agree with a well-formed sequence of length n.
size_t valid_bytes(std::string_view text, size_t pos, size_t n) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  size_t k = 1;
  for (; k < n && pos + k < text.size(); ++k) {
    const auto byte = static_cast<uint8_t>(text[pos + k]);
    if (k == 1 ? !second_byte_ok(lead, byte) : !is_continuation(byte)) break;
  }
  return k;
}

}  // namespace

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t char_length(std::string_view text, size_t pos) {
  const size_t n = expected_length(static_cast<uint8_t>(text[pos]));
  if (n <= 1) return 1;
  return valid_bytes(text, pos, n) == n ? n : 1;
}

uint32_t decode(std::string_view text, size_t pos) {
  const size_t n = char_length(text, pos);
  const auto lead = static_cast<uint8_t>(text[pos]);
  if (n == 1) return lead;
  uint32_t cp = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(text[pos + k]) & 0x3F);
  return cp;
}

size_t complete_prefix_length(std::string_view text) {
  // A character is at most 4 bytes, so only a lead byte among the last 3 can be waiting for more.
  const size_t size = text.size();
  for (size_t back = 1; back <= 3 && back <= size; ++back) {
    const size_t pos = size - back;
    const auto byte = static_cast<uint8_t>(text[pos]);
    if (is_continuation(byte)) continue;
    const size_t n = expected_length(byte);
    // Hold back only a sequence that is still well-formed and merely short of bytes; anything
    // invalid will never complete, so it is shown at once.
    return n > back && valid_bytes(text, pos, n) == back ? pos : size;
  }
  return size;
}

}  // namespace r1pi::utf8
