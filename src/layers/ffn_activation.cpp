#include "layers/ffn_activation.h"

#include <algorithm>

namespace r1pi {

namespace {
constexpr float kSwigluAlpha = 1.702f;
constexpr float kSwigluLimit = 7.0f;
}  // namespace

void swiglu_oai(float* g, const float* u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float gate = std::min(g[i], kSwigluLimit);
    const float up = std::clamp(u[i], -kSwigluLimit, kSwigluLimit);
    g[i] = (gate / (1.0f + expf_r1pi(-(kSwigluAlpha * gate)))) * (up + 1.0f);
  }
}

void gated_activation(FfnActivation activation, float* g, const float* u, int64_t n, const Kernels& kern) {
  if (activation == FfnActivation::SwigluOai) swiglu_oai(g, u, n);
  else kern.silu_mul(g, u, n);
}

}  // namespace r1pi
