// Byte-level BPE on one pre-tokenized piece: the whole piece if it is a token and the vocabulary
// ignores merges (Llama 3), otherwise its bytes merged pair by pair, lowest merge rank first and
// leftmost first among equal ranks (as the tokenizers library and llama.cpp do).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/vocab.h"

namespace r1pi {

class BpeModel {
 public:
  // Throws r1pi::Error when a byte has no token, or a merge is malformed or names a token (either
  // part or the result) the vocabulary lacks: the tokenizers library refuses such files too, and a
  // merge that can never apply is a sign of a corrupt or mismatched vocabulary.
  // `index` must outlive the model. ignore_merges: the pre-tokenizer's (PreTokenizerType).
  BpeModel(const Vocab& vocab, const TokenIndex& index, bool ignore_merges);

  // Appends the ids of one piece of raw text (bytes, not yet byte-mapped).
  void encode_piece(std::string_view raw, std::vector<int32_t>& out) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  const TokenIndex& index_;
  bool ignore_merges_;
  std::array<int32_t, 256> byte_ids_{};
  std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and merged id
};

}  // namespace r1pi
