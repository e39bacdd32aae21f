// Which experts a token's FFN runs, and with what weights (llama.cpp's build_moe_ffn, no scaling):
//   qwen3moe (ExpertGating::SoftmaxTopK): the softmax over every expert's logit, the k most
//     probable, each weight its probability over the sum of the k;
//   gpt-oss (TopKSoftmax): the k largest logits, each weight the softmax over those k.
// Every rank computes the same router logits (the router is whole on each), so every rank picks
// the same experts.
#pragma once
#include <cstdint>

#include "model/architecture.h"
#include "neon/kernels.h"

namespace r1pi {

struct ExpertChoice {
  uint32_t expert;
  float weight;
};

// The sum of the chosen probabilities is clamped below at 2^-14 before dividing, as llama.cpp does.
inline constexpr float kMinExpertWeightSum = 6.103515625e-5f;

// logits: the router's n_experts outputs for one token (SoftmaxTopK replaces them by their
// softmax, kern.softmax). chosen[0..k): the k largest, largest first, ties to the lower index,
// with their weights as the gating says (summed and softmaxed in that order).
void choose_experts(float* logits, int n_experts, int k, ExpertChoice* chosen, const Kernels& kern,
                    ExpertGating gating = ExpertGating::SoftmaxTopK);

}  // namespace r1pi
