// Text <-> token ids for the two vocabulary families Llama models ship:
//  - byte-level BPE (tokenizer.ggml.model = "gpt2", pre "llama-bpe": Llama 3, DeepSeek-R1-Distill-
//    Llama; pre "qwen2": Qwen2.5, Qwen3, DeepSeek-R1-Distill-Qwen): the pre-tokenizer's PCRE2 regex,
//    GPT-2 byte mapping, merges by rank, whole-word lookup first where the pre-tokenizer says so
//    (Llama 3's ignore_merges);
//  - SentencePiece style (tokenizer.ggml.model = "llama": Llama 2, llama2.c): score-driven merges,
//    "▁" for spaces, <0xXX> byte fallback.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace r1pi {

class Tokenizer {
 public:
  explicit Tokenizer(Vocab vocab);  // validates; throws r1pi::Error
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // parse_special: text that spells a CONTROL or USER_DEFINED token (e.g. "<｜User｜>") becomes that
  // one id (scanning left to right, longest token first); otherwise such text is tokenised as
  // ordinary characters. add_bos: prepend BOS (throws r1pi::Error if the vocabulary has none).
  // Any bytes are accepted: invalid UTF-8 is encoded byte by byte (byte-level BPE) or through <0xXX>
  // tokens (SentencePiece), so decode(encode(x)) gives x back, with SentencePiece's leading space
  // (" " + x, unless the vocabulary's add_space_prefix is off), SentencePiece's space mark U+2581
  // ("▁") read back as a space (as sentencepiece and llama.cpp do: the mark is how those
  // vocabularies spell a space) and without the text of control
  // tokens. Thread-safe.
  // With parse_special, a spelling marked by mark_plain() stays text and the marks are dropped.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;
  // User text to put inside parsed text (a chat message in its template): special tokens it spells
  // will be read as text, not as control tokens (special_tokens.h: kPlainMark).
  std::string mark_plain(std::string_view text) const;
  // Concatenated bytes of the ids (control tokens such as BOS render as nothing; USER_DEFINED ones
  // such as "<think>" as their text). Throws r1pi::Error for an id outside the vocabulary.
  std::string decode(const std::vector<int32_t>& ids) const;
  // The raw bytes one token stands for (may be part of a UTF-8 character).
  std::string token_bytes(int32_t id) const;

  int32_t n_vocab() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  bool add_bos() const;
  bool is_end_of_generation(int32_t id) const;
  std::optional<int32_t> find_token(std::string_view text) const;  // exact stored text
  const Vocab& vocab() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A prompt as `r1pi -p` gives it to the model (and llama.cpp's tools do): special tokens parsed, BOS
// first when the vocabulary adds one, unless no_bos.
std::vector<int32_t> encode_prompt(const Tokenizer& tokenizer, std::string_view text, bool no_bos);

// Turns a stream of ids into printable UTF-8: bytes of an incomplete character are held back until
// the rest arrives (or flush()), so a terminal never shows half a character. render_control: a
// control token gives its text instead of nothing (harmony's channel markers, for their parser).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, bool render_control = false)
      : tokenizer_(tokenizer), render_control_(render_control) {}
  std::string push(int32_t id);
  std::string flush();  // whatever is held back, even if incomplete

 private:
  const Tokenizer& tokenizer_;
  bool render_control_;
  std::string pending_;
};

}  // namespace r1pi
