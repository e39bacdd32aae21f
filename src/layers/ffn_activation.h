// The gated FFN's activations beside silu(g) * u (the kernels' silu_mul): gpt-oss's clamped SwiGLU
// (ggml's swiglu_oai with llama.cpp's constants, alpha 1.702 and limit 7):
//   g' = min(g, 7)  (the gate clamped from above only), u' = clamp(u, -7, 7),
//   g = (g' / (1 + exp(-(1.702 * g')))) * (u' + 1), with r1pi's exp (silu_mul's form).
// Plain loops: r1pi builds without contracted multiply-adds, so every backend gets these bytes.
#pragma once
#include <cstdint>

#include "model/architecture.h"
#include "neon/kernels.h"

namespace r1pi {

void swiglu_oai(float* g, const float* u, int64_t n);

// g = activation(g, u) for the architecture's activation.
void gated_activation(FfnActivation activation, float* g, const float* u, int64_t n, const Kernels& kern);

}  // namespace r1pi
