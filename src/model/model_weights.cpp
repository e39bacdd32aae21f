#include "model/model_weights.h"

#include <cstring>
#include <string>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/tensor_table.h"
#include "model/weight_slices.h"
#include "ggml/quantize.h"

namespace r1pi {

ModelWeights ModelWeights::load(const GgufFile& file, const ModelConfig& config, const Shard& shard,
                                SliceSource& source,
                                const std::function<void(uint64_t, uint64_t)>& progress) {
  const std::vector<TensorSlice> slices = plan_slices(file, config, shard);
  ModelWeights w;
  uint64_t done = 0;
  for (const TensorSlice& s : slices) w.bytes_ += s.bytes();
  const uint64_t total = w.bytes_;
  w.layers.resize(config.n_layers);
  // Where a slice goes: the member its row of the tensor table names.
  auto matrix_of = [&w, &config](const TensorSlice& s) -> Matrix* {
    if (auto m = std::get_if<Matrix ModelWeights::*>(&s.spec->fills)) return &(w.**m);
    if (auto m = std::get_if<Matrix LayerWeights::*>(&s.spec->fills)) return &(w.layers[s.layer].**m);
    if (auto m = std::get_if<std::vector<Matrix> LayerWeights::*>(&s.spec->fills)) {
      std::vector<Matrix>& experts = w.layers[s.layer].**m;
      experts.resize(config.n_experts);
      return &experts.at(s.expert);
    }
    return nullptr;
  };
  auto vector_of = [&w, &config](const TensorSlice& s) -> std::vector<float>* {
    if (auto v = std::get_if<std::vector<float> ModelWeights::*>(&s.spec->fills)) return &(w.**v);
    if (auto v = std::get_if<std::vector<float> LayerWeights::*>(&s.spec->fills))
      return &(w.layers[s.layer].**v);
    if (auto v = std::get_if<std::vector<std::vector<float>> LayerWeights::*>(&s.spec->fills)) {
      std::vector<std::vector<float>>& experts = w.layers[s.layer].**v;
      experts.resize(config.n_experts);
      return &experts.at(s.expert);
    }
    return nullptr;
  };

  // All matrices in one huge-page buffer (common/huge_buffer.h), each 64-byte aligned.
  size_t matrix_bytes = 0;
  for (const TensorSlice& s : slices)
    if (s.spec->is_matrix()) matrix_bytes += (s.bytes() + 63) / 64 * 64;
  w.buffer_ = HugeBuffer(matrix_bytes);
  uint8_t* next_bytes = w.buffer_.data();
  std::vector<uint8_t> vector_bytes;

  for (const TensorSlice& s : slices) {
    if (std::vector<float>* v = vector_of(s)) {
      // Norm weights: kept as floats whatever their stored type.
      vector_bytes.resize(s.bytes());
      source.read(s, vector_bytes.data());
      v->resize(size_t(s.col_end - s.col_begin));
      dequantize_row(s.tensor->type, vector_bytes.data(), v->data(), int64_t(v->size()));
    } else if (Matrix* m = matrix_of(s)) {
      uint8_t* bytes = next_bytes;
      next_bytes += (s.bytes() + 63) / 64 * 64;
      source.read(s, bytes);
      m->type = s.tensor->type;
      m->cols = s.col_end - s.col_begin;
      m->rows = s.rows();
      m->row_bytes = s.row_bytes();
      m->data = bytes;
    } else {
      throw Error(file.path() + ": internal error: " + s.tensor->name + " fills no weight");
    }
    done += s.bytes();
    if (progress) progress(done, total);
  }
  if (config.tied_output) {
    // The output matrix is the embedding: its local rows are a view, not a second copy.
    w.output = w.token_embd;
    w.output.data = w.token_embd.row(shard.vocab.begin);
    w.output.rows = shard.vocab.size();
  }
  return w;
}

}  // namespace r1pi
