#include "model/model_loader.h"

#include <cstdio>
#include <unistd.h>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/weight_slices.h"

namespace r1pi {

Tokenizer load_tokenizer(const GgufFile& file) {
  Vocab vocab = Vocab::from_gguf(file);  // its errors name the file
  try {
    return Tokenizer(std::move(vocab));
  } catch (const Error& e) {
    throw Error(file.path() + ": tokenizer: " + e.what());
  }
}

LoadedModel describe_model(const GgufFile& file, int rank, int n_ranks, const ShardWeights& weights) {
  LoadedModel model;
  model.file_bytes = file.file_size();
  model.config = ModelConfig::from_gguf(file);
  model.shard = Shard::for_rank(model.config, rank, n_ranks, weights);
  model.tokenizer = std::make_unique<Tokenizer>(load_tokenizer(file));
  // Every output row must be a token the tokenizer can print (llama.cpp requires the same): a
  // shorter token list would fail only when generation first picks one of the missing ids.
  if (uint32_t(model.tokenizer->n_vocab()) != model.config.n_vocab)
    throw Error(file.path() + ": the vocabulary has " + std::to_string(model.tokenizer->n_vocab()) +
                " tokens but the model " + std::to_string(model.config.n_vocab) + " output rows");
  return model;
}

void load_weights(LoadedModel& model, const GgufFile& file, SliceSource& source, bool progress) {
  const bool show = progress && isatty(STDERR_FILENO);
  int last_percent = -1;
  model.weights = ModelWeights::load(file, model.config, model.shard, source,
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

LoadedModel load_model(const std::string& path, bool progress, int rank, int n_ranks, const ShardWeights& weights) {
  GgufFile file = GgufFile::open(path);
  MappedSliceSource source(file);
  LoadedModel model = describe_model(file, rank, n_ranks, weights);
  load_weights(model, file, source, progress);
  file.release();
  return model;
}

}  // namespace r1pi
