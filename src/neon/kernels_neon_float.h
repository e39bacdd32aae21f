// The float products of the NEON backends (F32, F16 and BF16 weights, F32 activations): an R weight
// rows x T tokens tile of the recipe (kernels.h) for the tiling of kernels_neon_shared.h, and
// vec_dot_f32, which rmsnorm and attention use too. Included through kernels_neon_table.h only.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <cmath>

#include "ggml/bf16.h"
#include "neon/kernels_neon_shared.h"

namespace r1pi {
namespace {

// BF16 weights: the top half of a float, so widening is a shift by 16 (exact, as bf16_to_fp32).
struct BF16W {
  using Elem = uint16_t;
  static float32x4_t load4(const uint16_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
  static float one(const uint16_t* p) { return bf16_to_fp32(*p); }
};

// ---- float dot products: R weight rows x T tokens -----------------------------------------

// acc[i % 8] = fma(w[i], x[i], acc[i % 8]) for every i, then reduce8: eight elements per step
// into lanes 0..3 and 4..7, the last n % 8 one at a time into the same lanes.
template <class WF, int R, int T>
inline void float_tile(int64_t n, const typename WF::Elem* const* w, const float* const* x,
                       float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  const int64_t n8 = n - n % 8;
  for (int64_t i = 0; i < n8; i += 8) {
    float32x4_t xv[T][2];
    for (int t = 0; t < T; ++t) {
      xv[t][0] = vld1q_f32(x[t] + i);
      xv[t][1] = vld1q_f32(x[t] + i + 4);
    }
    for (int r = 0; r < R; ++r) {
      const float32x4_t w0 = WF::load4(w[r] + i);
      const float32x4_t w1 = WF::load4(w[r] + i + 4);
      for (int t = 0; t < T; ++t) {
        acc[r][t][0] = vfmaq_f32(acc[r][t][0], w0, xv[t][0]);
        acc[r][t][1] = vfmaq_f32(acc[r][t][1], w1, xv[t][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      if (n8 == n) {
        out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
        continue;
      }
      float a[8];
      vst1q_f32(a, acc[r][t][0]);
      vst1q_f32(a + 4, acc[r][t][1]);
      for (int64_t i = n8; i < n; ++i) a[i % 8] = std::fma(WF::one(w[r] + i), x[t][i], a[i % 8]);
      out[r][t] = reduce8(a);
    }
  }
}

template <class WF>
struct FloatOps {
  using W = typename WF::Elem;
  using X = float;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    float_tile<WF, R, T>(n, w, x, out);
  }
};


float vec_dot_f32(int64_t n, const float* a, const float* b) { return vec_dot<FloatOps<F32W>>(n, a, b); }

}  // namespace
}  // namespace r1pi

#endif
