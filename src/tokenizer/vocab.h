// The vocabulary as GGUF stores it (tokenizer.ggml.*), independent of where it came from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

class GgufFile;

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
  UNDEFINED = 0, NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6,
};

struct Vocab {
  std::string model = "gpt2";          // "gpt2": byte-level BPE; "llama": SentencePiece style
  std::string pre = "llama-bpe";       // pre-tokenizer name (BPE only)
  std::vector<std::string> tokens;     // token text as stored (GPT-2 byte mapping for BPE)
  std::vector<float> scores;           // SentencePiece merge scores (may be empty for BPE)
  std::vector<TokenType> types;
  std::vector<std::string> merges;     // BPE merges "left right", highest priority first; Tokenizer
                                       // refuses one whose parts or result are not tokens
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  bool add_bos = true;
  bool add_space_prefix = true;        // SentencePiece: a space before text at the start or after a
                                       // special token (tokenizer.ggml.add_space_prefix)
  std::vector<int32_t> eog_ids;        // end-of-generation ids (eos plus any eot); empty: {eos}
  std::string chat_template;           // tokenizer.chat_template, may be empty

  // Reads tokenizer.ggml.* from a GGUF file; throws r1pi::Error naming the file and key.
  static Vocab from_gguf(const GgufFile& file);
  // Checks sizes and ids are consistent; throws r1pi::Error(context + ": ...").
  void validate(const std::string& context) const;
};

}  // namespace r1pi
