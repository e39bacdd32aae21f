// Opens a GGUF model, reads its configuration and vocabulary, copies this rank's weight slices and
// releases the mapping.
#pragma once
#include <memory>
#include <string>

#include "model/llama_config.h"
#include "model/llama_weights.h"
#include "model/shard.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct LoadedModel {
  LlamaConfig config;
  Shard shard;
  std::unique_ptr<Tokenizer> tokenizer;
  LlamaWeights weights;
  uint64_t file_bytes = 0;
};

// shard: nullptr for the whole model. progress: show a progress line on stderr (only when it is a
// terminal). Throws r1pi::Error naming the file and the problem.
LoadedModel load_model(const std::string& path, const Shard* shard, bool progress);

}  // namespace r1pi
