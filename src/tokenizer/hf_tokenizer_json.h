// Builds a GGUF-style Vocab from a Hugging Face tokenizer.json (byte-level BPE, as Llama 3, Qwen2.5
// and Qwen3 ship it), with the keys llama.cpp's converter writes for that family.
#pragma once
#include <string>

#include "tokenizer/vocab.h"

namespace r1pi {

enum class SpecialTokenNames {
  Llama3,          // as the file has them (Llama 3's <|begin_of_text|>, Qwen's <|im_end|>, ...)
  DeepSeekR1,      // DeepSeek-R1-Distill-Llama's renames: <｜begin▁of▁sentence｜> (128000),
                   // <｜end▁of▁sentence｜> (128001), <｜User｜> (128011), <｜Assistant｜> (128012),
                   // <think> (128013), </think> (128014), <｜▁pad▁｜> (128015)
};

// The family (tokenizer.ggml.pre, its special tokens, add_bos) is recognised by the regex of the
// file's pre-tokenizer. Throws r1pi::Error naming the path on a missing or malformed file, an
// unknown regex, or DeepSeekR1 names asked of a tokenizer other than Llama 3's.
Vocab load_hf_tokenizer_json(const std::string& path, SpecialTokenNames names);

// A small offline vocabulary for demos and tests: the 256 byte-level tokens, BOS and EOS, padded with
// <|reserved_special_token_K|> control tokens (K from 0 at id 258) up to n_vocab (>= 258, else
// r1pi::Error), no merges (so text encodes byte by byte).
Vocab builtin_byte_vocab(int32_t n_vocab);

}  // namespace r1pi
