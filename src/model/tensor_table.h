// An architecture's tensors, described once (its rows: model/arch/). For each tensor: its GGUF
// name, its shape in configuration terms, how the ranks split it and the weights member it fills.
// Validation (ModelConfig::from_gguf), the slice plan (and so loading and --weights-from-root) and
// the model maker all read this table; adding an architecture is a new table plus the lines of
// math that differ.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/model_weights.h"

namespace r1pi {

struct ModelConfig;
struct Shard;

// A tensor dimension, in configuration terms.
enum class Dim : uint8_t {
  One,        // no second dimension: a vector
  Embd,       // dim, the residual stream
  QueryDim,   // n_heads * head_dim
  KvDim,      // n_kv_heads * head_dim
  Ffn,        // ffn_dim
  Vocab,      // n_vocab
  RopePairs,  // rope_dim / 2
  HeadDim,    // head_dim: one head (per-head q/k norms)
  Experts,    // n_experts: the router's outputs, the third dimension of the expert tensors
  ExpertFfn,  // expert_ffn_dim: one expert's hidden units
  Heads,      // n_heads: one value per query head (gpt-oss's attention sinks)
};

// Tensor parallelism: a tensor is whole on every rank, or each rank holds a contiguous range of
// one unit along its rows (GGUF ne[1], the outputs of y = W x) or its columns (ne[0], the inputs;
// the ranks then add their partial sums). A bias follows its matrix's outputs: split with them
// where the matrix's rows are split (q, k, v, an expert's gate and up), and replicated where its
// columns are, since it belongs to the sum: the forward adds it once, after the ranks' sync
// (attn_output.bias, ffn_down_exps.bias).
enum class Unit : uint8_t {
  None,        // replicated
  QueryHeads,  // the rank's query heads (head_dim each)
  KvHeads,     // the rank's KV heads (head_dim each)
  FfnUnits,    // the rank's FFN hidden units (whole blocks of every column-split FFN tensor)
  VocabRows,   // the rank's vocabulary rows
  ExpertUnits, // the rank's hidden units of each expert (whole blocks of ffn_down_exps; Shard)
  QueryHeadValues,  // the rank's query heads, one element each (a vector of Dim::Heads)
};
enum class Axis : uint8_t { Rows, Cols };
struct Split {
  Axis axis;
  Unit unit;
};
inline constexpr Split kReplicated{Axis::Rows, Unit::None};
constexpr Split rows_by(Unit u) { return {Axis::Rows, u}; }
constexpr Split cols_by(Unit u) { return {Axis::Cols, u}; }

// Where a tensor's data goes: a member of the model's or of every layer's weights, or nowhere
// (std::monostate: the configuration reads it, as rope_freqs).
// A vector of matrices holds one matrix per expert (the slabs of a 3-D expert tensor), a vector
// of vectors one vector per expert (the rows of a 2-D expert bias).
using WeightMember = std::variant<std::monostate, Matrix ModelWeights::*,
                                  std::vector<float> ModelWeights::*, Matrix LayerWeights::*,
                                  std::vector<float> LayerWeights::*, std::vector<Matrix> LayerWeights::*,
                                  std::vector<std::vector<float>> LayerWeights::*>;

enum class Presence : uint8_t {
  Required,
  Optional,       // absent: the configuration or the block does without (rope_freqs, q/k/v biases)
  ElseTokenEmbd,  // absent: tied to token_embd.weight (output.weight)
};

struct TensorSpec {
  std::string_view name;  // GGUF name; per-layer tensors get "blk.<layer>." in front
  Dim ne0, ne1;           // GGUF shape: ne0 the row length, ne1 the rows (One: a vector)
  Split split;
  WeightMember fills;
  Presence presence = Presence::Required;
  // Experts: one ne0 x ne1 matrix per expert, expert e the e-th contiguous slab (llama.cpp's
  // *_exps tensors), or with ne1 One one vector per expert, expert e the e-th row (their biases);
  // the split applies to each expert's part. One: a vector or a matrix.
  Dim ne2 = Dim::One;

  bool per_layer() const {
    return std::holds_alternative<Matrix LayerWeights::*>(fills) ||
           std::holds_alternative<std::vector<float> LayerWeights::*>(fills) ||
           std::holds_alternative<std::vector<Matrix> LayerWeights::*>(fills) ||
           std::holds_alternative<std::vector<std::vector<float>> LayerWeights::*>(fills);
  }
  bool is_matrix() const { return ne1 != Dim::One; }
  bool per_expert() const { return ne2 == Dim::Experts; }
  std::string gguf_name(uint32_t layer) const;
  // {ne0} for a vector, {ne0, ne1} for a matrix, {ne0, ne1, ne2} per expert ({ne0, ne2} for a
  // vector per expert), in elements.
  std::vector<uint64_t> shape(const ModelConfig& config) const;
};

// The row of config's architecture that fills member; throws r1pi::Error when none does.
const TensorSpec& spec_filling(const ModelConfig& config, const WeightMember& member);

// One tensor of a model: a row of the table and, for per-layer rows, the layer.
struct TensorInstance {
  const TensorSpec* spec;
  uint32_t layer;
  std::string name;  // its GGUF name
};
// Every tensor of config's architecture in file order, as llama.cpp's converters write them:
// the table's rows in order, each run of per-layer rows repeated layer by layer.
std::vector<TensorInstance> model_tensors(const ModelConfig& config);

// Elements of a dimension for this configuration.
uint64_t dim_size(const ModelConfig& config, Dim dim);

// [begin, end) in elements along the split axis that shard holds of a tensor split by unit (of
// expert `expert`'s matrix for Unit::ExpertUnits).
struct ElementRange {
  int64_t begin = 0, end = 0;
};
ElementRange unit_elements(const ModelConfig& config, const Shard& shard, Unit unit, uint32_t expert = 0);

}  // namespace r1pi
