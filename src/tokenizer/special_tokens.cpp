#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace r1pi {

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab) : vocab_(vocab) {
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const TokenType type = vocab.types[id];
    const std::string& text = vocab.tokens[id];
    if ((type == TokenType::CONTROL || type == TokenType::USER_DEFINED) && !text.empty()) {
      by_first_byte_[static_cast<uint8_t>(text[0])].push_back(static_cast<int32_t>(id));
    }
  }
  for (auto& candidates : by_first_byte_) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
      return vocab.tokens[a].size() > vocab.tokens[b].size();
    });
  }
}

int32_t SpecialTokenMatcher::match_at(std::string_view text, size_t pos) const {
  const std::string_view rest = text.substr(pos);
  for (int32_t id : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
    if (rest.starts_with(vocab_.tokens[id])) return id;
  }
  return -1;
}

std::vector<Fragment> SpecialTokenMatcher::split(std::string_view text, std::string& storage) const {
  // Marks (a 0xFF right before a special token's spelling) are dropped; `plain` holds where each
  // marked spelling starts in the text without them. Any other 0xFF is a byte like the rest.
  std::vector<size_t> plain;
  if (text.find(kPlainMark) != std::string_view::npos) {
    storage.clear();
    for (size_t pos = 0; pos < text.size(); ++pos) {
      if (text[pos] == kPlainMark && pos + 1 < text.size() && match_at(text, pos + 1) >= 0) plain.push_back(storage.size());
      else storage += text[pos];
    }
    text = storage;
  }
  std::vector<Fragment> fragments;
  size_t raw_begin = 0;
  auto next_plain = plain.begin();
  for (size_t pos = 0; pos < text.size();) {
    while (next_plain != plain.end() && *next_plain < pos) ++next_plain;
    const int32_t id = match_at(text, pos);
    if (id < 0 || (next_plain != plain.end() && *next_plain == pos)) {
      // A marked spelling is passed over whole: a special token inside it stays text too.
      pos += id < 0 ? 1 : vocab_.tokens[id].size();
      continue;
    }
    if (pos > raw_begin) fragments.push_back({text.substr(raw_begin, pos - raw_begin)});
    fragments.push_back({{}, id});
    pos += vocab_.tokens[id].size();
    raw_begin = pos;
  }
  if (raw_begin < text.size()) fragments.push_back({text.substr(raw_begin)});
  return fragments;
}

std::string SpecialTokenMatcher::mark_plain(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const int32_t id = match_at(text, pos);
    if (id < 0) {
      out += text[pos++];
      continue;
    }
    out += kPlainMark;
    out += vocab_.tokens[id];
    pos += vocab_.tokens[id].size();
  }
  return out;
}

}  // namespace r1pi
