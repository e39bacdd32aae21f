#include "tokenizer/bpe.h"

#include <queue>
#include <string>

#include "common/error.h"
#include "tokenizer/byte_mapping.h"

namespace r1pi {
namespace {

// A candidate merge of the symbol at `left` with its right neighbour. Entries go stale when either
// symbol changes; they are recognised by the ids no longer matching and skipped.
struct Candidate {
  int32_t rank;
  int32_t left;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
  // priority_queue pops the greatest: make that the lowest rank, then the leftmost position.
  bool operator<(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : left > other.left;
  }
};

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
};

}  // namespace

BpeModel::BpeModel(const Vocab& vocab, const TokenIndex& index, bool ignore_merges)
    : index_(index), ignore_merges_(ignore_merges) {
  for (int b = 0; b < 256; ++b) {
    const std::string& text = byte_mapping::to_text(static_cast<uint8_t>(b));
    byte_ids_[b] = index.find(text);
    if (byte_ids_[b] < 0) {
      throw Error("byte-level BPE vocabulary has no token for byte " + std::to_string(b) + " ('" + text +
                  "')");
    }
  }
  merges_.reserve(vocab.merges.size());
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    // Byte-mapped token texts contain no spaces; searching from 1 still allows a part that is a space.
    const size_t space = merge.find(' ', 1);
    auto fail = [&](const std::string& why) {
      return Error("BPE merge " + std::to_string(rank) + " ('" + merge + "'): " + why);
    };
    if (space == std::string::npos) throw fail("expected two tokens separated by a space");
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    const int32_t left_id = index.find(left);
    const int32_t right_id = index.find(right);
    const int32_t result_id = index.find(std::string(left) + std::string(right));
    if (left_id < 0 || right_id < 0) throw fail("names a token that is not in the vocabulary");
    if (result_id < 0) throw fail("its result is not in the vocabulary");
    // A repeated pair keeps its first (best) rank.
    merges_.emplace(pair_key(left_id, right_id), Merge{static_cast<int32_t>(rank), result_id});
  }
}

void BpeModel::encode_piece(std::string_view raw, std::vector<int32_t>& out) const {
  if (raw.empty()) return;
  if (ignore_merges_) {
    if (const int32_t whole = index_.find(byte_mapping::encode(raw)); whole >= 0) {
      out.push_back(whole);
      return;
    }
  }

  const auto n = static_cast<int32_t>(raw.size());
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i)
    symbols[i] = {byte_ids_[static_cast<uint8_t>(raw[i])], i - 1, i + 1 < n ? i + 1 : -1};

  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate> queue(std::less<Candidate>(), std::move(storage));
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0) return;
    const int32_t a = symbols[left].id, b = symbols[symbols[left].next].id;
    if (auto it = merges_.find(pair_key(a, b)); it != merges_.end())
      queue.push({it->second.rank, left, a, b, it->second.result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    if (left.id != top.left_id || left.next < 0 || symbols[left.next].id != top.right_id) continue;
    // The right symbol joins the left one and leaves the list.
    Symbol& right = symbols[left.next];
    left.id = top.result;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.left;
    consider(left.prev);
    consider(top.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace r1pi
