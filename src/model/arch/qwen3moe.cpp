// Qwen3 mixture of experts (llama.cpp's "qwen3moe": Qwen3-30B-A3B, -235B-A22B): qwen3's attention
// (per-head q/k norm, RoPE over the halves of each head) and in every layer, instead of the dense
// FFN, a router (ffn_gate_inp, n_experts rows, F32 in real files) and n_experts gated FFNs held as
// 3-D tensors, expert e the e-th slab. Each token runs the n_experts_used experts with the highest
// softmax probabilities, weighted by those probabilities over their sum (no shared expert):
// ModelForward::moe_ffn. The router is whole on every rank, so every rank picks the same experts;
// each expert's hidden units are split across ranks like the dense FFN's (Shard::expert_units).
#include "model/arch/architectures.h"

#include "model/model_config.h"

namespace r1pi {

const Architecture& qwen3moe_architecture() {
  using C = ModelConfig;
  using D = Dim;
  using U = Unit;
  using L = LayerWeights;
  static const Architecture arch = [] {
    std::vector<HyperParam> params = transformer_params();
    params.insert(params.end(), {
        {"expert_count", &C::n_experts},
        {"expert_used_count", &C::n_experts_used},
        // llama.cpp's fallback; Qwen3's converter always writes it (768 against a dense 6144).
        {"expert_feed_forward_length", &C::expert_ffn_dim,
         [](const C& c) { return double(c.n_experts_used ? c.ffn_dim / c.n_experts_used : 0); }},
    });
    constexpr Presence kRequired = Presence::Required;
    return Architecture{
        .name = "qwen3moe",
        .params = std::move(params),
        .tensors = decoder_tensors(
            {
                {"attn_q_norm.weight", D::HeadDim, D::One, kReplicated, &L::q_norm},
                {"attn_k_norm.weight", D::HeadDim, D::One, kReplicated, &L::k_norm},
            },
            {
                // name                 ne0           ne1            split                      fills
                {"ffn_gate_inp.weight",  D::Embd,      D::Experts,    kReplicated,               &L::router},
                {"ffn_gate_exps.weight", D::Embd,      D::ExpertFfn,  rows_by(U::ExpertUnits),   &L::gate_exps,
                 kRequired, D::Experts},
                {"ffn_up_exps.weight",   D::Embd,      D::ExpertFfn,  rows_by(U::ExpertUnits),   &L::up_exps,
                 kRequired, D::Experts},
                {"ffn_down_exps.weight", D::ExpertFfn, D::Embd,       cols_by(U::ExpertUnits),   &L::down_exps,
                 kRequired, D::Experts},
            }),
        .rope = RopeLayout::NeoxHalves,
        .experts = true,
    };
  }();
  return arch;
}

}  // namespace r1pi
