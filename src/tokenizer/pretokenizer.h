// The byte-level BPE pre-tokenizer: splits text into the pieces that BPE then encodes one by one,
// with the regular expression the vocabulary was trained with (Llama 3's for "llama-bpe").
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace r1pi {

class PreTokenizer {
 public:
  // Throws r1pi::Error("unsupported pre-tokenizer ...") for names whose regex is not implemented.
  explicit PreTokenizer(const std::string& pre);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Pieces covering all of text, in order. Invalid UTF-8 is not an error: the regex cannot match
  // such bytes, so each run of them becomes a piece of its own (and BPE encodes it byte by byte),
  // which keeps decode(encode(text)) == text for any bytes. Thread-safe.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Regex;
  std::unique_ptr<Regex> regex_;
};

}  // namespace r1pi
