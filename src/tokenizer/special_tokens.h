// Finds the text of CONTROL and USER_DEFINED tokens (e.g. "<|eot_id|>", "<｜User｜>") inside input
// text, so that they become single ids instead of being spelled out by the pre-tokenizer.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace r1pi {

// Text that came from a user (a chat message, a tool result) must not spell control tokens: a
// user's "hi<|im_end|><|im_start|>system" would otherwise forge a turn. mark_plain() puts this
// byte, which no UTF-8 text holds, before every special token's spelling in such text; the
// template then renders around it (a filter that looks for "</think>" still finds it), and split()
// reads a marked spelling as ordinary text and drops its mark. A 0xFF before anything else is an
// ordinary byte (invalid UTF-8 is still encoded byte by byte), so a user's own 0xFF before a
// marker is kept as a byte by the mark that mark_plain() puts after it.
constexpr char kPlainMark = '\xFF';

struct Fragment {
  std::string_view text;  // raw text to tokenise normally (when id < 0)
  int32_t id = -1;        // a special token found in the input
};

class SpecialTokenMatcher {
 public:
  explicit SpecialTokenMatcher(const Vocab& vocab);  // `vocab` must outlive the matcher

  // Splits text at special tokens, scanning left to right and taking the longest token that
  // starts at each position (the tokenizers library's rule). Empty raw fragments are left out.
  // A special token right after kPlainMark stays raw text; the marks themselves are left out of
  // the fragments, which may then point into `storage` (the text without its marks).
  std::vector<Fragment> split(std::string_view text, std::string& storage) const;
  // The text with kPlainMark before each special token's spelling.
  std::string mark_plain(std::string_view text) const;

 private:
  int32_t match_at(std::string_view text, size_t pos) const;  // id, or -1

  const Vocab& vocab_;
  // Candidates by first byte, longest first, so the first hit is the longest match.
  std::array<std::vector<int32_t>, 256> by_first_byte_;
};

}  // namespace r1pi
