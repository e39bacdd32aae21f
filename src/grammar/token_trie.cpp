#include "grammar/token_trie.h"

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {
namespace {

std::vector<std::string> all_token_bytes(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(size_t(tokenizer.n_vocab()));
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) bytes[size_t(id)] = tokenizer.token_bytes(id);
  return bytes;
}

std::vector<int32_t> all_eog_ids(const Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id)
    if (tokenizer.is_end_of_generation(id)) ids.push_back(id);
  return ids;
}

}  // namespace

TokenTrie::TokenTrie(const Tokenizer& tokenizer) : TokenTrie(all_token_bytes(tokenizer), all_eog_ids(tokenizer)) {}

TokenTrie::TokenTrie(std::vector<std::string> token_bytes, const std::vector<int32_t>& eog_ids)
    : bytes_(std::move(token_bytes)), eog_(bytes_.size(), false) {
  for (int32_t id : eog_ids) {
    if (id < 0 || size_t(id) >= bytes_.size())
      throw Error("token trie: end-of-generation id " + std::to_string(id) + " outside the vocabulary of " +
                  std::to_string(bytes_.size()));
    if (!eog_[size_t(id)]) eog_ids_.push_back(id);
    eog_[size_t(id)] = true;
  }
  // Sorted byte strings visit the trie in depth-first order: each string shares a prefix with the
  // one before, leaves that prefix's path and adds its own nodes, whose tokens follow at once.
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n_vocab(); ++id)
    if (!eog_[size_t(id)] && !bytes_[size_t(id)].empty()) order.push_back(id);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return bytes_[size_t(a)] != bytes_[size_t(b)] ? bytes_[size_t(a)] < bytes_[size_t(b)] : a < b;
  });
  nodes_.push_back({0, 0, 0, 0});
  std::vector<uint32_t> path = {0};  // the nodes of the previous string's prefix, root first
  std::string_view previous;
  for (int32_t id : order) {
    const std::string& s = bytes_[size_t(id)];
    if (s.size() > std::numeric_limits<uint16_t>::max())
      throw Error("token trie: token " + std::to_string(id) + " is longer than 65535 bytes");
    size_t common = 0;
    while (common < s.size() && common < previous.size() && s[common] == previous[common]) ++common;
    for (; path.size() > common + 1; path.pop_back()) nodes_[path.back()].subtree_end = uint32_t(nodes_.size());
    for (size_t d = common; d < s.size(); ++d) {
      path.push_back(uint32_t(nodes_.size()));
      nodes_.push_back({0, uint32_t(ids_.size()), uint16_t(d + 1), static_cast<uint8_t>(s[d])});
    }
    ids_.push_back(id);
    max_depth_ = std::max(max_depth_, s.size());
    previous = s;
  }
  for (uint32_t node : path) nodes_[node].subtree_end = uint32_t(nodes_.size());
  nodes_.push_back({0, uint32_t(ids_.size()), 0, 0});  // the sentinel
}

}  // namespace r1pi
