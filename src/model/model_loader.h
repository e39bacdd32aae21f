// Opens a GGUF model, reads its configuration and vocabulary, copies this rank's weight slices and
// releases the mapping.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "model/model_config.h"
#include "model/model_fingerprint.h"
#include "model/model_weights.h"
#include "model/shard.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

class GgufFile;
class SliceSource;

struct LoadedModel {
  ModelConfig config;
  Shard shard;
  std::unique_ptr<Tokenizer> tokenizer;
  ModelWeights weights;
  uint64_t file_bytes = 0;
  // The file's fingerprint when loading computed it (several ranks check they opened one model).
  std::optional<Fingerprint> fingerprint;
};

// The file's vocabulary as a tokenizer (a vocabulary-only file will do). Throws r1pi::Error naming
// the file.
Tokenizer load_tokenizer(const GgufFile& file);

// Reads the configuration and vocabulary and computes rank's shard of n_ranks (no weights yet).
// weights: the plan's (--shard-weights; empty: equal shares).
LoadedModel describe_model(const GgufFile& file, int rank = 0, int n_ranks = 1, const ShardWeights& weights = {});
// Copies the shard's weight slices from source. progress: a progress line on stderr (only when it
// is a terminal).
void load_weights(LoadedModel& model, const GgufFile& file, SliceSource& source, bool progress);

// Opens path, builds rank's shard of n_ranks from its mapping and releases it. Throws r1pi::Error
// naming the file and the problem.
LoadedModel load_model(const std::string& path, bool progress = false, int rank = 0,
                       int n_ranks = 1, const ShardWeights& weights = {});

}  // namespace r1pi
