// Llama's tensors (llama.cpp's names) and how r1pi splits them across ranks: attention by KV-head
// groups (rows of wq/wk/wv, columns of wo), the FFN by hidden units (rows of w1/w3, columns of
// w2), the output by vocabulary rows; the embedding and the norms are whole on every rank.
#include "model/tensor_table.h"

#include "common/error.h"
#include "model/llama_config.h"
#include "model/shard.h"

namespace r1pi {

const Architecture& llama_architecture() {
  using D = Dim;
  using U = Unit;
  using LW = LlamaWeights;
  using L = LayerWeights;
  static const Architecture arch{"llama", {
      // name                ne0          ne1         split                 fills
      {"rope_freqs.weight",  D::RopePairs, D::One,    kReplicated,          std::monostate{},
       Presence::Optional},
      {"token_embd.weight",  D::Embd,     D::Vocab,    kReplicated,          &LW::token_embd},
      {"attn_norm.weight",   D::Embd,     D::One,      kReplicated,          &L::attn_norm},
      {"attn_q.weight",      D::Embd,     D::QueryDim, rows_by(U::QueryHeads), &L::wq},
      {"attn_k.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),  &L::wk},
      {"attn_v.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),  &L::wv},
      {"attn_output.weight", D::QueryDim, D::Embd,     cols_by(U::QueryHeads), &L::wo},
      {"ffn_norm.weight",    D::Embd,     D::One,      kReplicated,          &L::ffn_norm},
      {"ffn_gate.weight",    D::Embd,     D::Ffn,      rows_by(U::FfnUnits), &L::w1},
      {"ffn_up.weight",      D::Embd,     D::Ffn,      rows_by(U::FfnUnits), &L::w3},
      {"ffn_down.weight",    D::Ffn,      D::Embd,     cols_by(U::FfnUnits), &L::w2},
      {"output_norm.weight", D::Embd,     D::One,      kReplicated,          &LW::output_norm},
      {"output.weight",      D::Embd,     D::Vocab,    rows_by(U::VocabRows), &LW::output,
       Presence::ElseTokenEmbd},
  }};
  return arch;
}

const TensorSpec& spec_filling(const Architecture& arch, const WeightMember& member) {
  for (const TensorSpec& t : arch.tensors)
    if (t.fills == member) return t;
  throw Error("internal error: no tensor of " + std::string(arch.name) + " fills that weight");
}

std::vector<TensorInstance> model_tensors(const LlamaConfig& config) {
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

std::vector<uint64_t> TensorSpec::shape(const LlamaConfig& config) const {
  if (!is_matrix()) return {dim_size(config, ne0)};
  return {dim_size(config, ne0), dim_size(config, ne1)};
}

uint64_t dim_size(const LlamaConfig& c, Dim dim) {
  switch (dim) {
    case Dim::One: return 1;
    case Dim::Embd: return c.dim;
    case Dim::QueryDim: return uint64_t(c.n_heads) * c.head_dim;
    case Dim::KvDim: return c.kv_dim();
    case Dim::Ffn: return c.ffn_dim;
    case Dim::Vocab: return c.n_vocab;
    case Dim::RopePairs: return c.rope_dim / 2;
  }
  throw Error("internal error: unknown tensor dimension");
}

ElementRange unit_elements(const LlamaConfig& c, const Shard& shard, Unit unit) {
  const int64_t hd = c.head_dim, group = c.n_heads / c.n_kv_heads;
  switch (unit) {
    case Unit::QueryHeads: return {shard.kv_heads.begin * group * hd, shard.kv_heads.end * group * hd};
    case Unit::KvHeads: return {shard.kv_heads.begin * hd, shard.kv_heads.end * hd};
    case Unit::FfnUnits: return {shard.ffn.begin, shard.ffn.end};
    case Unit::VocabRows: return {shard.vocab.begin, shard.vocab.end};
    case Unit::None: break;
  }
  throw Error("internal error: a replicated tensor has no split range");
}

}  // namespace r1pi
