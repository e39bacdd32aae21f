// The weights one rank computes with: its slices of every tensor, copied out of the GGUF mapping
// into one buffer it owns (huge pages where the kernel gives them), so that the mapping can be
// released and only the shard stays resident.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "common/huge_buffer.h"
#include "model/model_config.h"
#include "model/shard.h"
#include "ggml/ggml_type.h"

namespace r1pi {

class GgufFile;
class SliceSource;

// A row-major matrix of `rows` rows of `cols` elements in one ggml type (y = W x takes x of
// length cols and gives `rows` outputs).
struct Matrix {
  GgmlType type = GgmlType::F32;
  int64_t cols = 0;
  int64_t rows = 0;
  size_t row_bytes = 0;
  const uint8_t* data = nullptr;

  const uint8_t* row(int64_t r) const { return data + size_t(r) * row_bytes; }
  size_t bytes() const { return size_t(rows) * row_bytes; }
};

struct LayerWeights {
  std::vector<float> attn_norm;   // [dim]
  Matrix wq, wk, wv;              // local query / key / value rows
  // Optional parts, empty when the architecture or file has none:
  std::vector<float> bq, bk, bv;  // biases added after wq / wk / wv (qwen2): the local heads' part
  std::vector<float> q_norm, k_norm;  // [head_dim] RMSNorm of each query / key head before RoPE (qwen3)
  std::vector<float> sinks;       // [local q heads] each head's attention sink (gpt-oss)
  Matrix wo;                      // all dim rows, the columns of the local heads
  std::vector<float> bo;          // [dim] added once, after the sync (gpt-oss)
  std::vector<float> ffn_norm;    // [dim]
  Matrix w1, w3;                  // gate and up: local hidden rows
  Matrix w2;                      // down: all dim rows, the columns of the local hidden units
  // A mixture-of-experts FFN instead of w1/w2/w3 (qwen3moe), empty in dense layers:
  Matrix router;                  // ffn_gate_inp: one row of dim per expert, whole on every rank
  std::vector<float> router_bias; // [n_experts] added to the router's logits (gpt-oss)
  std::vector<Matrix> gate_exps, up_exps;  // per expert: the rows of the rank's units of it
  std::vector<Matrix> down_exps;  // per expert: all dim rows, the columns of the rank's units
  // Expert biases (gpt-oss): per expert, its gate's and up's for the rank's units, its down's
  // whole (added once, after the sync).
  std::vector<std::vector<float>> gate_exps_bias, up_exps_bias, down_exps_bias;

  bool has_experts() const { return router.rows > 0; }
};

struct ModelWeights {
  Matrix token_embd;              // all vocab rows: every rank embeds its own tokens
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm; // [dim]
  Matrix output;                  // local vocab rows (token_embd's rows when tied)

  // Copies this shard's slices (plan_slices) from source into a buffer of its own; file supplies
  // the tensor infos. progress(done_bytes, total_bytes) is called after each slice. Throws
  // r1pi::Error when a tensor is missing or a slice is not block-aligned.
  static ModelWeights load(const GgufFile& file, const ModelConfig& config, const Shard& shard,
                           SliceSource& source,
                           const std::function<void(uint64_t, uint64_t)>& progress = {});

  uint64_t total_bytes() const { return bytes_; }  // bytes of the slices this rank holds

 private:
  HugeBuffer buffer_;             // every matrix; the norms are in their vectors
  uint64_t bytes_ = 0;            // the slice plan's total
};

}  // namespace r1pi
