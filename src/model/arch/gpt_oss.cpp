// OpenAI's gpt-oss (llama.cpp's "gpt-oss": gpt-oss-20b, -120b), from shared/data/gptoss/
// ARCH_FACTS.md: the decoder with biases on q, k, v and the attention output, a learned sink per
// query head in every softmax, sliding-window attention (attention.sliding_window) in the even
// layers, YaRN RoPE over the halves of each head, and in every layer a mixture of experts whose
// router has a bias and weighs the k largest logits by their softmax; the experts have biases and
// the clamped SwiGLU (layers/ffn_activation.h). The pre-FFN norm is named post_attention_norm.
// Biases of row-split matrices split with their outputs; those of column-split ones (attn_output,
// ffn_down_exps) are whole on every rank and added after the sync (model/tensor_table.h).
#include "model/arch/architectures.h"

#include "model/model_config.h"

namespace r1pi {

const Architecture& gpt_oss_architecture() {
  using C = ModelConfig;
  using D = Dim;
  using U = Unit;
  using L = LayerWeights;
  static const Architecture arch = [] {
    std::vector<HyperParam> params = transformer_params();
    const std::vector<HyperParam> experts = expert_params(nullptr);
    params.insert(params.end(), experts.begin(), experts.end());
    params.insert(params.end(), {
        {"attention.sliding_window", &C::sliding_window},
        // llama.cpp's default when the key is absent, as in the published files: every other layer,
        // from layer 0.
        {"attention.sliding_window_pattern", &C::swa_period, [](const C&) { return 2.0; }, false},
    });
    return Architecture{
        .name = "gpt-oss",
        .params = std::move(params),
        .tensors = decoder_tensors({
            .attention = {
                {"attn_q.bias", D::QueryDim, D::One, cols_by(U::QueryHeads), &L::bq},
                {"attn_k.bias", D::KvDim,    D::One, cols_by(U::KvHeads),    &L::bk},
                {"attn_v.bias", D::KvDim,    D::One, cols_by(U::KvHeads),    &L::bv},
            },
            .ffn = expert_ffn_tensors(true),
            .after_output = {
                {"attn_output.bias",  D::Embd,  D::One, kReplicated,                 &L::bo},
                {"attn_sinks.weight", D::Heads, D::One, cols_by(U::QueryHeadValues), &L::sinks},
            },
            .ffn_norm = "post_attention_norm.weight",
        }),
        .rope = RopeLayout::NeoxHalves,
        .experts = true,
        .gating = ExpertGating::TopKSoftmax,
        .activation = FfnActivation::SwigluOai,
    };
  }();
  return arch;
}

}  // namespace r1pi
