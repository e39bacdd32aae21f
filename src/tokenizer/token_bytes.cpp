#include "tokenizer/token_bytes.h"

#include <string_view>

#include "tokenizer/byte_mapping.h"

namespace r1pi {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xXX>" -> the byte; anything else is shown as its text.
std::string byte_token(const std::string& text) {
  if (text.size() == 6 && text.starts_with("<0x") && text[5] == '>') {
    const int hi = hex_digit(text[3]), lo = hex_digit(text[4]);
    if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
  }
  return text;
}

std::string unescape_spaces(std::string_view text) {
  constexpr std::string_view kSpace = "\xE2\x96\x81";
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos).starts_with(kSpace)) {
      out += ' ';
      pos += kSpace.size();
    } else {
      out += text[pos++];
    }
  }
  return out;
}

}  // namespace

std::string render_token_bytes(const Vocab& vocab, int32_t id) {
  const std::string& text = vocab.tokens[id];
  switch (vocab.types[id]) {
    case TokenType::CONTROL:
    case TokenType::UNUSED: return {};
    case TokenType::UNKNOWN: return "\xE2\x96\x85";
    case TokenType::USER_DEFINED: return text;
    case TokenType::BYTE: return byte_token(text);
    case TokenType::NORMAL:
    case TokenType::UNDEFINED: break;
  }
  return vocab.model == "gpt2" ? byte_mapping::decode(text) : unescape_spaces(text);
}

}  // namespace r1pi
