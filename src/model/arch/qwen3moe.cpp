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
  using L = LayerWeights;
  static const Architecture arch = [] {
    std::vector<HyperParam> params = transformer_params();
    // llama.cpp's fallback for expert_feed_forward_length; Qwen3's converter always writes it (768
    // against a dense 6144).
    const std::vector<HyperParam> experts =
        expert_params([](const C& c) { return double(c.n_experts_used ? c.ffn_dim / c.n_experts_used : 0); });
    params.insert(params.end(), experts.begin(), experts.end());
    return Architecture{
        .name = "qwen3moe",
        .params = std::move(params),
        .tensors = decoder_tensors({
            .attention = {
                {"attn_q_norm.weight", D::HeadDim, D::One, kReplicated, &L::q_norm},
                {"attn_k_norm.weight", D::HeadDim, D::One, kReplicated, &L::k_norm},
            },
            .ffn = expert_ffn_tensors(false)}),
        .rope = RopeLayout::NeoxHalves,
        .experts = true,
    };
  }();
  return arch;
}

}  // namespace r1pi
