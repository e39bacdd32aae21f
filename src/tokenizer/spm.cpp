#include "tokenizer/spm.h"

#include <cstdio>
#include <queue>
#include <string>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace r1pi {
namespace {

struct Symbol {
  size_t begin;
  size_t size;  // 0 once joined into the symbol on its left
  int32_t prev;
  int32_t next;
};

// A candidate join of the symbol at `left` with the next one; stale once either has changed size.
struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  size_t size;  // the joined length when this candidate was made
  // priority_queue pops the greatest: the highest score, then the leftmost position.
  bool operator<(const Bigram& other) const {
    return score != other.score ? score < other.score : left > other.left;
  }
};

// SentencePiece's name for the byte fallback token of `byte`.
std::string byte_token_name(uint8_t byte) {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", byte);
  return name;
}

}  // namespace

std::string spm_escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == ' ') out += "\xE2\x96\x81";
    else out += c;
  }
  return out;
}

SpmModel::SpmModel(const Vocab& vocab, const TokenIndex& index) : vocab_(vocab), index_(index) {
  for (int b = 0; b < 256; ++b) byte_ids_[b] = index.find(byte_token_name(static_cast<uint8_t>(b)));
}

float SpmModel::score(int32_t id) const {
  return static_cast<size_t>(id) < vocab_.scores.size() ? vocab_.scores[id] : 0.0f;
}

void SpmModel::append_bytes(std::string_view text, std::vector<int32_t>& out) const {
  for (char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    const int32_t id = byte_ids_[byte] >= 0 ? byte_ids_[byte] : vocab_.unk_id;
    if (id < 0) {
      throw Error("cannot encode byte " + byte_token_name(byte) +
                  ": the vocabulary has neither that byte token nor an unknown token");
    }
    out.push_back(id);
  }
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  // Characters are the starting symbols; an invalid byte is a symbol of its own (and falls back
  // to its byte token below).
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = utf8::char_length(text, pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({pos, n, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
    pos += n;
  }

  std::priority_queue<Bigram> queue;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const size_t size = symbols[left].size + symbols[right].size;
    const int32_t id = index_.find(text.substr(symbols[left].begin, size));
    if (id >= 0) queue.push({score(id), left, right, size});
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

  while (!queue.empty()) {
    const Bigram top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != top.size) continue;
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    consider(left.prev, top.left);
    consider(top.left, left.next);
  }

  // Joined symbols are tokens by construction; only single characters can be missing.
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = text.substr(symbols[i].begin, symbols[i].size);
    const int32_t id = index_.find(piece);
    if (id >= 0) out.push_back(id);
    else append_bytes(piece, out);
  }
}

}  // namespace r1pi
