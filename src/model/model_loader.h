// Opens a GGUF model, reads its configuration and vocabulary, copies this rank's weight slices and
// releases the mapping.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "model/llama_config.h"
#include "model/llama_weights.h"
#include "model/shard.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

class GgufFile;
class SliceSource;

struct LoadedModel {
  LlamaConfig config;
  Shard shard;
  std::unique_ptr<Tokenizer> tokenizer;
  LlamaWeights weights;
  uint64_t file_bytes = 0;
};

// Picks this rank's shard once the configuration is known; empty: the whole model.
using ShardChooser = std::function<Shard(const GgufFile&, const LlamaConfig&)>;

// Reads the configuration and vocabulary and picks the shard (no weights yet).
LoadedModel describe_model(const GgufFile& file, const ShardChooser& choose_shard);
// Copies the shard's weight slices from source. progress: a progress line on stderr (only when it
// is a terminal).
void load_weights(LoadedModel& model, const GgufFile& file, SliceSource& source, bool progress);

// Opens path, builds the model from its mapping and releases it. Throws r1pi::Error naming the
// file and the problem.
LoadedModel load_model(const std::string& path, const ShardChooser& choose_shard = {},
                       bool progress = false);

}  // namespace r1pi
