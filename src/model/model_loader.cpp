#include "model/model_loader.h"

#include <cstdio>
#include <unistd.h>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/weight_slices.h"

namespace r1pi {

LoadedModel describe_model(const GgufFile& file, const ShardChooser& choose_shard) {
  LoadedModel model;
  model.file_bytes = file.file_size();
  model.config = LlamaConfig::from_gguf(file);
  model.shard = choose_shard ? choose_shard(file, model.config) : Shard::whole(model.config);
  model.tokenizer = std::make_unique<Tokenizer>(Vocab::from_gguf(file));
  if (uint32_t(model.tokenizer->n_vocab()) > model.config.n_vocab)
    throw Error(file.path() + ": the vocabulary has " + std::to_string(model.tokenizer->n_vocab()) +
                " tokens but the model only " + std::to_string(model.config.n_vocab) + " rows");
  return model;
}

void load_weights(LoadedModel& model, const GgufFile& file, SliceSource& source, bool progress) {
  const bool show = progress && isatty(STDERR_FILENO);
  int last_percent = -1;
  model.weights = LlamaWeights::load(file, model.config, model.shard, source,
                                     [&](uint64_t done, uint64_t total) {
    if (!show || total == 0) return;
    const int percent = int(100 * done / total);
    if (percent == last_percent) return;
    last_percent = percent;
    std::fprintf(stderr, "\rloading %s: %3d%% (%.2f / %.2f GB)", file.path().c_str(), percent,
                 done / 1e9, total / 1e9);
    if (done == total) std::fprintf(stderr, "\n");
  });
}

LoadedModel load_model(const std::string& path, const ShardChooser& choose_shard, bool progress) {
  GgufFile file = GgufFile::open(path);
  MappedSliceSource source(file);
  LoadedModel model = describe_model(file, choose_shard);
  load_weights(model, file, source, progress);
  file.release();
  return model;
}

}  // namespace r1pi
