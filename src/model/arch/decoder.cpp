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

std::vector<HyperParam> expert_params(double (*ffn_fallback)(const ModelConfig&)) {
  using C = ModelConfig;
  return {
      {"expert_count", &C::n_experts},
      {"expert_used_count", &C::n_experts_used},
      {"expert_feed_forward_length", &C::expert_ffn_dim, ffn_fallback},
  };
}

std::vector<TensorSpec> expert_ffn_tensors(bool with_biases) {
  using D = Dim;
  using U = Unit;
  using L = LayerWeights;
  constexpr Presence kRequired = Presence::Required;
  std::vector<TensorSpec> t = {
      // name                 ne0           ne1            split                      fills
      {"ffn_gate_inp.weight",  D::Embd,      D::Experts,    kReplicated,               &L::router},
      {"ffn_gate_exps.weight", D::Embd,      D::ExpertFfn,  rows_by(U::ExpertUnits),   &L::gate_exps,
       kRequired, D::Experts},
      {"ffn_up_exps.weight",   D::Embd,      D::ExpertFfn,  rows_by(U::ExpertUnits),   &L::up_exps,
       kRequired, D::Experts},
      {"ffn_down_exps.weight", D::ExpertFfn, D::Embd,       cols_by(U::ExpertUnits),   &L::down_exps,
       kRequired, D::Experts},
  };
  if (!with_biases) return t;
  // Each after its matrix, as the converter writes them; a vector per expert (ne1 One).
  t.insert(t.begin() + 1, {"ffn_gate_inp.bias", D::Experts, D::One, kReplicated, &L::router_bias});
  t.insert(t.begin() + 3, {"ffn_gate_exps.bias", D::ExpertFfn, D::One, cols_by(U::ExpertUnits), &L::gate_exps_bias,
                           kRequired, D::Experts});
  t.insert(t.begin() + 5, {"ffn_up_exps.bias", D::ExpertFfn, D::One, cols_by(U::ExpertUnits), &L::up_exps_bias,
                           kRequired, D::Experts});
  t.push_back({"ffn_down_exps.bias", D::Embd, D::One, kReplicated, &L::down_exps_bias, kRequired, D::Experts});
  return t;
}

std::vector<TensorSpec> decoder_tensors(const DecoderParts& parts) {
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
  t.insert(t.end(), parts.attention.begin(), parts.attention.end());
  t.push_back({"attn_output.weight", D::QueryDim, D::Embd, cols_by(U::QueryHeads), &L::wo});
  t.insert(t.end(), parts.after_output.begin(), parts.after_output.end());
  t.push_back({parts.ffn_norm,        D::Embd,     D::One,      kReplicated,            &L::ffn_norm});
  t.insert(t.end(), parts.ffn.begin(), parts.ffn.end());
  t.insert(t.end(), {
      {"output_norm.weight", D::Embd,     D::One,      kReplicated,            &LW::output_norm},
      {"output.weight",      D::Embd,     D::Vocab,    rows_by(U::VocabRows),  &LW::output,
       Presence::ElseTokenEmbd},
  });
  return t;
}

}  // namespace r1pi
