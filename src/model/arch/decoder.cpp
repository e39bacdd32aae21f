// What every Llama-style decoder shares: its hyper-parameter rows and its tensor table, with room
// for the optional parts of an architecture's attention.
#include "model/arch/architectures.h"

#include "model/model_config.h"

namespace r1pi {

std::vector<HyperParam> transformer_params() {
  using C = ModelConfig;
  return {
      {"context_length", &C::n_ctx_train},
      {"embedding_length", &C::dim},
      {"block_count", &C::n_layers},
      {"feed_forward_length", &C::ffn_dim},
      {"attention.head_count", &C::n_heads},
      {"attention.head_count_kv", &C::n_kv_heads, [](const C& c) { return double(c.n_heads); }},
      {"attention.key_length", &C::head_dim,
       [](const C& c) { return double(c.n_heads ? c.dim / c.n_heads : 0); }, false},
      // llama.cpp sizes attn_k and attn_v from value_length (qwen3's 128 with dim / heads 64 needs it).
      {"attention.value_length", &C::value_dim,
       [](const C& c) { return double(c.n_heads ? c.dim / c.n_heads : 0); }, false},
      {"rope.dimension_count", &C::rope_dim, [](const C& c) { return double(c.head_dim); }},
      {"attention.layer_norm_rms_epsilon", &C::rms_eps, [](const C&) { return 1e-5; }},
      {"rope.freq_base", &C::rope_base, [](const C&) { return 10000.0; }},
  };
}

std::vector<TensorSpec> dense_ffn_tensors() {
  using D = Dim;
  using U = Unit;
  using L = LayerWeights;
  return {
      {"ffn_gate.weight",    D::Embd,     D::Ffn,      rows_by(U::FfnUnits),   &L::w1},
      {"ffn_up.weight",      D::Embd,     D::Ffn,      rows_by(U::FfnUnits),   &L::w3},
      {"ffn_down.weight",    D::Ffn,      D::Embd,     cols_by(U::FfnUnits),   &L::w2},
  };
}

std::vector<TensorSpec> decoder_tensors(const std::vector<TensorSpec>& attention_parts,
                                        const std::vector<TensorSpec>& ffn) {
  using D = Dim;
  using U = Unit;
  using LW = ModelWeights;
  using L = LayerWeights;
  std::vector<TensorSpec> t = {
      // name                ne0          ne1          split                   fills
      {"rope_freqs.weight",  D::RopePairs, D::One,     kReplicated,            std::monostate{},
       Presence::Optional},
      {"token_embd.weight",  D::Embd,     D::Vocab,    kReplicated,            &LW::token_embd},
      {"attn_norm.weight",   D::Embd,     D::One,      kReplicated,            &L::attn_norm},
      {"attn_q.weight",      D::Embd,     D::QueryDim, rows_by(U::QueryHeads), &L::wq},
      {"attn_k.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),    &L::wk},
      {"attn_v.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),    &L::wv},
  };
  t.insert(t.end(), attention_parts.begin(), attention_parts.end());
  t.insert(t.end(), {
      {"attn_output.weight", D::QueryDim, D::Embd,     cols_by(U::QueryHeads), &L::wo},
      {"ffn_norm.weight",    D::Embd,     D::One,      kReplicated,            &L::ffn_norm},
  });
  t.insert(t.end(), ffn.begin(), ffn.end());
  t.insert(t.end(), {
      {"output_norm.weight", D::Embd,     D::One,      kReplicated,            &LW::output_norm},
      {"output.weight",      D::Embd,     D::Vocab,    rows_by(U::VocabRows),  &LW::output,
       Presence::ElseTokenEmbd},
  });
  return t;
}

}  // namespace r1pi
