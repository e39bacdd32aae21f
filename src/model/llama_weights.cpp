#include "model/llama_weights.h"

#include <cstring>
#include <string>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/weight_slices.h"
#include "ggml/quantize.h"

namespace r1pi {

LlamaWeights LlamaWeights::load(const GgufFile& file, const LlamaConfig& config, const Shard& shard,
                                SliceSource& source,
                                const std::function<void(uint64_t, uint64_t)>& progress) {
  const std::vector<TensorSlice> slices = plan_slices(file, config, shard);
  uint64_t total = 0, done = 0;
  for (const TensorSlice& s : slices) total += s.bytes();

  LlamaWeights w;
  w.layers.resize(config.n_layers);
  // Where each slice goes, in plan_slices' order.
  std::vector<Matrix*> matrices;
  std::vector<std::vector<float>*> vectors;
  matrices.push_back(&w.token_embd);
  for (LayerWeights& L : w.layers) {
    for (Matrix* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w1, &L.w3, &L.w2}) matrices.push_back(m);
    vectors.push_back(&L.attn_norm);
    vectors.push_back(&L.ffn_norm);
  }
  vectors.push_back(&w.output_norm);
  if (!config.tied_output) matrices.push_back(&w.output);

  // All matrices in one huge-page buffer (common/huge_buffer.h), each 64-byte aligned.
  auto is_vector = [](const TensorSlice& s) { return s.tensor->ne.size() == 1; };
  size_t matrix_bytes = 0;
  for (const TensorSlice& s : slices)
    if (!is_vector(s)) matrix_bytes += (s.bytes() + 63) / 64 * 64;
  w.buffer_ = HugeBuffer(matrix_bytes);
  uint8_t* next_bytes = w.buffer_.data();
  std::vector<uint8_t> vector_bytes;

  size_t next_matrix = 0, next_vector = 0;
  for (const TensorSlice& s : slices) {
    if (is_vector(s)) {
      // Norm weights: kept as floats whatever their stored type.
      vector_bytes.resize(s.bytes());
      source.read(s, vector_bytes.data());
      std::vector<float>& v = *vectors[next_vector++];
      v.resize(size_t(s.col_end - s.col_begin));
      dequantize_row(s.tensor->type, vector_bytes.data(), v.data(), int64_t(v.size()));
    } else {
      uint8_t* bytes = next_bytes;
      next_bytes += (s.bytes() + 63) / 64 * 64;
      source.read(s, bytes);
      Matrix& m = *matrices[next_matrix++];
      m.type = s.tensor->type;
      m.cols = s.col_end - s.col_begin;
      m.rows = s.rows();
      m.row_bytes = s.row_bytes();
      m.data = bytes;
    }
    done += s.bytes();
    if (progress) progress(done, total);
  }
  if (next_matrix != matrices.size() || next_vector != vectors.size())
    throw Error(file.path() + ": internal error: weight slices out of step");
  if (config.tied_output) {
    // The output matrix is the embedding: its local rows are a view, not a second copy.
    w.output = w.token_embd;
    w.output.data = w.token_embd.row(shard.vocab.begin);
    w.output.rows = shard.vocab.size();
  }
  return w;
}

uint64_t LlamaWeights::total_bytes() const {
  uint64_t n = token_embd.bytes() + output_norm.size() * sizeof(float);
  if (output.data < token_embd.data || output.data >= token_embd.data + token_embd.bytes())
    n += output.bytes();
  for (const LayerWeights& L : layers)
    n += L.wq.bytes() + L.wk.bytes() + L.wv.bytes() + L.wo.bytes() + L.w1.bytes() + L.w2.bytes() +
         L.w3.bytes() + (L.attn_norm.size() + L.ffn_norm.size()) * sizeof(float);
  return n;
}

}  // namespace r1pi
