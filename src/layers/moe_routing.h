// Which experts a token's FFN runs, and with what weights (qwen3moe; llama.cpp's build_moe_ffn
// with softmax gating, no bias, weights normalised, not scaled). Every rank computes the same
// router logits (the router is whole on each), so every rank picks the same experts.
#pragma once
#include <cstdint>

#include "neon/kernels.h"

namespace r1pi {

struct ExpertChoice {
  uint32_t expert;
  float weight;
};

// The sum of the chosen probabilities is clamped below at 2^-14 before dividing, as llama.cpp does.
inline constexpr float kMinExpertWeightSum = 6.103515625e-5f;

// logits: the router's n_experts outputs for one token, replaced by their softmax (kern.softmax).
// chosen[0..k): the k most probable experts, most probable first, ties to the lower index; each
// weight its probability divided by the sum of the k probabilities (summed in that order).
void choose_experts(float* logits, int n_experts, int k, ExpertChoice* chosen, const Kernels& kern);

}  // namespace r1pi
