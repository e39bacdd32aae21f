// r1pi-model tokenize: the ids a prompt becomes, as `r1pi -p` encodes it, printed as llama.cpp's
// llama-tokenize prints them, so that the two can be compared on one file.
#pragma once
#include <string>

namespace r1pi {

struct TokenizeOptions {
  std::string model_path;  // a GGUF file; its vocabulary is all that is read
  std::string prompt;
  bool ids_only = false;   // --ids: only the ids, space-separated on one line
  bool no_bos = false;     // --no-bos: no BOS even where the vocabulary adds one
};

// One line per token, "<id, 6 wide> -> '<piece>'", control tokens spelt out (as llama-tokenize
// shows them); with ids_only, the ids on one line. Throws r1pi::Error naming the file.
std::string tokenize_prompt(const TokenizeOptions& options);

}  // namespace r1pi
