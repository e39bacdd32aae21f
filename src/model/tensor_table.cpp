// The generic side of the tensor tables (model/arch/ holds the rows): every tensor of a model in
// file order, their shapes and the element ranges a shard holds.
#include "model/tensor_table.h"

#include "common/error.h"
#include "model/architecture.h"
#include "model/model_config.h"
#include "model/shard.h"

namespace r1pi {

const TensorSpec& spec_filling(const ModelConfig& config, const WeightMember& member) {
  for (const TensorSpec& t : config.arch->tensors)
    if (t.fills == member) return t;
  throw Error("internal error: no tensor of " + std::string(config.arch->name) + " fills that weight");
}

std::vector<TensorInstance> model_tensors(const ModelConfig& config) {
  if (!config.arch) throw Error("internal error: a configuration without its architecture");
  const std::vector<TensorSpec>& t = config.arch->tensors;
  std::vector<TensorInstance> out;
  for (size_t i = 0; i < t.size();) {
    if (!t[i].per_layer()) {
      out.push_back({&t[i], 0, t[i].gguf_name(0)});
      ++i;
      continue;
    }
    size_t end = i;
    while (end < t.size() && t[end].per_layer()) ++end;
    for (uint32_t l = 0; l < config.n_layers; ++l)
      for (size_t j = i; j < end; ++j) out.push_back({&t[j], l, t[j].gguf_name(l)});
    i = end;
  }
  return out;
}

std::string TensorSpec::gguf_name(uint32_t layer) const {
  return per_layer() ? "blk." + std::to_string(layer) + "." + std::string(name) : std::string(name);
}

std::vector<uint64_t> TensorSpec::shape(const ModelConfig& config) const {
  if (!is_matrix()) return per_expert() ? std::vector<uint64_t>{dim_size(config, ne0), dim_size(config, ne2)}
                                         : std::vector<uint64_t>{dim_size(config, ne0)};
  if (per_expert()) return {dim_size(config, ne0), dim_size(config, ne1), dim_size(config, ne2)};
  return {dim_size(config, ne0), dim_size(config, ne1)};
}

uint64_t dim_size(const ModelConfig& c, Dim dim) {
  switch (dim) {
    case Dim::One: return 1;
    case Dim::Embd: return c.dim;
    case Dim::QueryDim: return uint64_t(c.n_heads) * c.head_dim;
    case Dim::KvDim: return c.kv_dim();
    case Dim::Ffn: return c.ffn_dim;
    case Dim::Vocab: return c.n_vocab;
    case Dim::RopePairs: return c.rope_dim / 2;
    case Dim::HeadDim: return c.head_dim;
    case Dim::Experts: return c.n_experts;
    case Dim::ExpertFfn: return c.expert_ffn_dim;
    case Dim::Heads: return c.n_heads;
  }
  throw Error("internal error: unknown tensor dimension");
}

ElementRange unit_elements(const ModelConfig& c, const Shard& shard, Unit unit, uint32_t expert) {
  const int64_t hd = c.head_dim;
  switch (unit) {
    case Unit::QueryHeads: return {shard.q_heads.begin * hd, shard.q_heads.end * hd};
    case Unit::KvHeads: return {shard.kv_heads.begin * hd, shard.kv_heads.end * hd};
    case Unit::FfnUnits: return {shard.ffn.begin, shard.ffn.end};
    case Unit::VocabRows: return {shard.vocab.begin, shard.vocab.end};
    case Unit::QueryHeadValues: return {shard.q_heads.begin, shard.q_heads.end};
    case Unit::ExpertUnits: {
      const Range r = shard.expert_units.at(expert);
      return {r.begin, r.end};
    }
    case Unit::None: break;
  }
  throw Error("internal error: a replicated tensor has no split range");
}

}  // namespace r1pi
