// SentencePiece-style BPE as llama.cpp runs it for tokenizer.ggml.model = "llama": start from the
// characters, repeatedly join the adjacent pair whose joined text is the token with the highest
// score, and spell characters the vocabulary lacks as <0xXX> byte tokens.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/vocab.h"

namespace r1pi {

class SpmModel {
 public:
  // `vocab` and `index` must outlive the model.
  SpmModel(const Vocab& vocab, const TokenIndex& index);

  // Appends the ids of already escaped text (spaces as U+2581). Throws r1pi::Error if a byte has
  // neither a <0xXX> token nor an unknown token to stand for it.
  void encode(std::string_view escaped, std::vector<int32_t>& out) const;

 private:
  float score(int32_t id) const;
  void append_bytes(std::string_view text, std::vector<int32_t>& out) const;

  const Vocab& vocab_;
  const TokenIndex& index_;
  std::array<int32_t, 256> byte_ids_{};  // <0xXX> tokens, -1 where absent
};

// Replaces every space with U+2581 ("▁"), SentencePiece's visible space.
std::string spm_escape_spaces(std::string_view text);

}  // namespace r1pi
