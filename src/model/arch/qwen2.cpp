// Qwen2 and Qwen2.5 (llama.cpp's "qwen2"; also DeepSeek-R1-Distill-Qwen): the decoder with
// biases on q, k and v, added after their matmuls and split with their heads; RoPE rotates the
// halves of each head (NEOX). The files carry the rope base (1e6) and leave output.weight out
// when the output is tied.
#include "model/arch/architectures.h"

namespace r1pi {

const Architecture& qwen2_architecture() {
  using D = Dim;
  using U = Unit;
  using L = LayerWeights;
  static const Architecture arch{
      .name = "qwen2",
      .params = transformer_params(),
      .tensors = decoder_tensors({.attention = {
          {"attn_q.bias", D::QueryDim, D::One, cols_by(U::QueryHeads), &L::bq, Presence::Optional},
          {"attn_k.bias", D::KvDim,    D::One, cols_by(U::KvHeads),    &L::bk, Presence::Optional},
          {"attn_v.bias", D::KvDim,    D::One, cols_by(U::KvHeads),    &L::bv, Presence::Optional},
      }}),
      .rope = RopeLayout::NeoxHalves,
  };
  return arch;
}

}  // namespace r1pi
