#include "tools/tokenize_prompt.h"

#include <cstdio>

#include "gguf/gguf_file.h"
#include "model/model_loader.h"

namespace r1pi {
namespace {

// llama-tokenize prints llama.cpp's piece with special tokens rendered: a control token (BOS,
// <|im_start|>) and the unknown token are spelt out, where r1pi's decode leaves them out.
std::string shown_piece(const Tokenizer& tokenizer, int32_t id) {
  const Vocab& vocab = tokenizer.vocab();
  const TokenType type = vocab.types[id];
  return type == TokenType::CONTROL || type == TokenType::UNKNOWN ? vocab.tokens[id]
                                                                   : tokenizer.token_bytes(id);
}

}  // namespace

std::string tokenize_prompt(const TokenizeOptions& o) {
  const Tokenizer tokenizer = load_tokenizer(GgufFile::open(o.model_path));
  const std::vector<int32_t> ids = encode_prompt(tokenizer, o.prompt, o.no_bos);
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (o.ids_only) {
      if (i) out += ' ';
      out += std::to_string(ids[i]);
      continue;
    }
    char id[16];
    std::snprintf(id, sizeof id, "%6d", ids[i]);
    out += std::string(id) + " -> '" + shown_piece(tokenizer, ids[i]) + "'\n";
  }
  if (o.ids_only) out += "\n";
  return out;
}

}  // namespace r1pi
