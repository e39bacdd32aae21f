// The byte-level BPE pre-tokenizer: splits text into the pieces that BPE then encodes one by one,
// with the regular expression the vocabulary was trained with, found by its GGUF name
// (tokenizer.ggml.pre) in one table of the pre-tokenizers r1pi knows.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace r1pi {

// A pre-tokenizer as llama.cpp knows it: the names a GGUF file may give it, its split regex and
// the two rules llama.cpp ties to it.
struct PreTokenizerType {
  std::vector<std::string_view> names;  // the first is the one r1pi writes
  // As the Split pre-tokenizer of the model's tokenizer.json spells it, so that a tokenizer.json is
  // recognised by it (find_pre_tokenizer_by_pattern).
  std::string_view pattern;
  // A piece that is a whole token is taken as it is, without merges (the tokenizers library's
  // ignore_merges; Llama 3 has it, Qwen does not, and the two can give different ids).
  bool ignore_merges;
  // llama.cpp's add_bos when the file has no tokenizer.ggml.add_bos_token.
  bool add_bos;
};

// The row with this name, or nullptr.
const PreTokenizerType* find_pre_tokenizer(std::string_view name);
// The row whose pattern is exactly this tokenizer.json regex, or nullptr.
const PreTokenizerType* find_pre_tokenizer_by_pattern(std::string_view pattern);
// Every name find_pre_tokenizer knows, for messages ("llama-bpe, llama3, ...").
std::string pre_tokenizer_names();

class PreTokenizer {
 public:
  // Throws r1pi::Error("unsupported pre-tokenizer ...") for names whose regex is not implemented.
  explicit PreTokenizer(const std::string& pre);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  const PreTokenizerType& type() const { return *type_; }

  // Pieces covering all of text, in order. Invalid UTF-8 is not an error: the regex cannot match
  // such bytes, so each run of them becomes a piece of its own (and BPE encodes it byte by byte),
  // which keeps decode(encode(text)) == text for any bytes. Thread-safe.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Regex;
  const PreTokenizerType* type_;
  std::unique_ptr<Regex> regex_;
};

}  // namespace r1pi
