// A vocabulary's token bytes as a byte trie, built once per vocabulary and shared read-only by
// every mask computation (token_mask.h). Nodes are stored in depth-first order, so a walk that
// finds a prefix impossible skips its whole subtree with one jump. Tokens with no bytes (control
// tokens) are not in the trie: constrained decoding never allows them, except the
// end-of-generation ids, which are allowed exactly where the grammar can end.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

class Tokenizer;

class TokenTrie {
 public:
  // token_bytes[id]: what the token adds to the text; eog_ids: end-of-generation ids (throws
  // r1pi::Error for one outside the vocabulary).
  TokenTrie(std::vector<std::string> token_bytes, const std::vector<int32_t>& eog_ids);
  // From Tokenizer::token_bytes and Tokenizer::is_end_of_generation.
  explicit TokenTrie(const Tokenizer& tokenizer);

  int32_t n_vocab() const { return int32_t(bytes_.size()); }
  const std::string& bytes(int32_t id) const { return bytes_[size_t(id)]; }
  bool is_eog(int32_t id) const { return eog_[size_t(id)]; }
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }

  // The depth-first layout (node 0 is the root, the empty prefix).
  // The ids whose bytes end at node i: ids()[nodes()[i].token_begin .. nodes()[i + 1].token_begin)
  // (the last node is a sentinel that only ends that range).
  struct Node {
    uint32_t subtree_end;  // the first node after this one's subtree
    uint32_t token_begin;
    uint16_t depth;        // bytes from the root
    uint8_t byte;          // the byte on the edge from the parent
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t n_nodes() const { return nodes_.size() - 1; }
  const std::vector<int32_t>& ids() const { return ids_; }
  size_t max_depth() const { return max_depth_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<bool> eog_;
  std::vector<int32_t> eog_ids_;
  std::vector<Node> nodes_;
  std::vector<int32_t> ids_;
  size_t max_depth_ = 0;
};

}  // namespace r1pi
