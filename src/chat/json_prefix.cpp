#include "chat/json_prefix.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "tokenizer/utf8.h"

namespace r1pi {

size_t json_value_end(std::string_view text, size_t start) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

ObjectStart match_object_start(std::string_view text, size_t start, std::span<const std::string_view> keys) {
  using State = ObjectStart::State;
  size_t i = start;
  auto skip_space = [&] {
    while (i < text.size() && is_json_space(text[i])) ++i;
  };
  if (i == text.size()) return {State::Maybe, i, ""};
  if (text[i] != '{') return {State::No, i, ""};
  ++i;
  skip_space();
  if (i == text.size()) return {State::Maybe, i, ""};
  if (text[i] != '"') return {State::No, i, ""};
  const size_t key_start = ++i;
  while (i < text.size() && text[i] != '"') {
    const std::string_view key_so_far = text.substr(key_start, i + 1 - key_start);
    if (std::none_of(keys.begin(), keys.end(), [&](std::string_view k) { return k.starts_with(key_so_far); }))
      return {State::No, i, ""};
    ++i;
  }
  if (i == text.size()) return {State::Maybe, i, ""};
  const std::string_view key = text.substr(key_start, i - key_start);
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return {State::No, i, ""};
  ++i;
  skip_space();
  if (i == text.size()) return {State::Maybe, i, ""};
  if (text[i] != ':') return {State::No, i, ""};
  ++i;
  skip_space();
  return {State::Yes, i, std::string(key)};
}

namespace {

// The four hex digits at text[at]; nothing when they are not four hex digits.
std::optional<uint32_t> hex4(std::string_view text, size_t at) {
  uint32_t value = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<uint32_t>(digit);
  }
  return value;
}

}  // namespace

StringPrefix decode_json_string_prefix(std::string_view body) {
  StringPrefix out{"", 0, false};
  size_t i = 0;
  while (i < body.size()) {
    const char c = body[i];
    if (c == '"') {
      out.used = i + 1;
      out.closed = true;
      return out;
    }
    if (c != '\\') {
      out.text += c;
      ++i;
      continue;
    }
    if (i + 1 == body.size()) break;  // the escape's letter is still to come
    const char letter = body[i + 1];
    static constexpr std::string_view kLetters = "\"\\/bfnrt", kMeanings = "\"\\/\b\f\n\r\t";
    if (const size_t k = kLetters.find(letter); k != std::string_view::npos) {
      out.text += kMeanings[k];
      i += 2;
      continue;
    }
    if (letter != 'u') {  // not JSON: kept as written
      out.text += body.substr(i, 2);
      i += 2;
      continue;
    }
    if (i + 6 > body.size()) break;
    const std::optional<uint32_t> unit = hex4(body, i + 2);
    if (!unit || (*unit >= 0xDC00 && *unit < 0xE000)) {  // not hex, or a lone low surrogate
      out.text += body.substr(i, 2);
      i += 2;
      continue;
    }
    if (*unit < 0xD800 || *unit >= 0xDC00) {
      utf8::append(out.text, *unit);
      i += 6;
      continue;
    }
    // A high surrogate: its pair is a second \u escape with a low surrogate.
    const bool pair_may_follow = std::string_view("\\u").starts_with(body.substr(i + 6, 2));
    if (pair_may_follow && i + 12 > body.size()) break;
    const std::optional<uint32_t> low = pair_may_follow ? hex4(body, i + 8) : std::nullopt;
    if (!low || *low < 0xDC00 || *low >= 0xE000) {
      out.text += body.substr(i, 6);
      i += 6;
      continue;
    }
    utf8::append(out.text, 0x10000 + ((*unit - 0xD800) << 10) + (*low - 0xDC00));
    i += 12;
  }
  out.used = i;
  return out;
}

}  // namespace r1pi
