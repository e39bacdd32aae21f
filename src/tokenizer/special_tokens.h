// Finds the text of CONTROL and USER_DEFINED tokens (e.g. "<|eot_id|>", "<｜User｜>") inside input
// text, so that they become single ids instead of being spelled out by the pre-tokenizer.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace r1pi {

struct Fragment {
  std::string_view text;  // raw text to tokenise normally (when id < 0)
  int32_t id = -1;        // a special token found in the input
};

class SpecialTokenMatcher {
 public:
  explicit SpecialTokenMatcher(const Vocab& vocab);  // `vocab` must outlive the matcher

  // Splits text at special tokens, scanning left to right and taking the longest token that
  // starts at each position (the tokenizers library's rule). Empty raw fragments are left out.
  std::vector<Fragment> split(std::string_view text) const;

 private:
  int32_t match_at(std::string_view text, size_t pos) const;  // id, or -1

  const Vocab& vocab_;
  // Candidates by first byte, longest first, so the first hit is the longest match.
  std::array<std::vector<int32_t>, 256> by_first_byte_;
};

}  // namespace r1pi
