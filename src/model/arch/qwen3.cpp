// Qwen3 (llama.cpp's "qwen3"; also DeepSeek-R1-0528-Qwen3): the decoder with an RMSNorm of each
// query and key head (one weight vector of head_dim for all heads, the same epsilon) before RoPE,
// no biases, RoPE over the halves of each head (NEOX). The head size is attention.key_length (128
// where dim / heads is 64 or 80).
#include "model/arch/architectures.h"

namespace r1pi {

const Architecture& qwen3_architecture() {
  using D = Dim;
  using L = LayerWeights;
  static const Architecture arch{
      .name = "qwen3",
      .params = transformer_params(),
      .tensors = decoder_tensors({.attention = {
          {"attn_q_norm.weight", D::HeadDim, D::One, kReplicated, &L::q_norm},
          {"attn_k_norm.weight", D::HeadDim, D::One, kReplicated, &L::k_norm},
      }}),
      .rope = RopeLayout::NeoxHalves,
  };
  return arch;
}

}  // namespace r1pi
