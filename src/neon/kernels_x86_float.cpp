// The x86 float matrix products (F16 and F32 weights, float activations), built once with AVX2 +
// FMA + F16C for every x86 backend (kernels_x86.h has the rules for these files). R rows x T tokens
// per tile, each element with its own accumulator in the recipe's order (kernels.h), so the tiling
// never changes a result.
#include "neon/kernels_x86.h"

#if defined(__x86_64__) || defined(__i386__)

namespace r1pi {

namespace {

template <bool F16, int R, int T>
void float_tile(const MatmulArgs& a, int64_t r, int t0) {
  const uint8_t* rows[R];
  const float* xs[T];
  for (int i = 0; i < R; ++i) rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
  for (int t = 0; t < T; ++t)
    xs[t] = reinterpret_cast<const float*>(a.x + size_t(t0 + t) * a.x_row_bytes);
  __m256 acc[R][T];
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
  const int64_t n8 = a.n & ~int64_t(7);
  for (int64_t e = 0; e < n8; e += 8) {
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w8<F16>(rows[i], e);
      for (int t = 0; t < T; ++t) acc[i][t] = _mm256_fmadd_ps(w, _mm256_loadu_ps(xs[t] + e), acc[i][t]);
    }
  }
  if (const int rem = int(a.n - n8)) {
    const __m256 m = _mm256_castsi256_ps(lane_mask(rem));
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w_partial<F16>(rows[i], n8, rem);
      for (int t = 0; t < T; ++t)
        acc[i][t] = _mm256_blendv_ps(
            acc[i][t], _mm256_fmadd_ps(w, load_partial(xs[t] + n8, rem), acc[i][t]), m);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < T; ++t) a.out[int64_t(t0 + t) * a.out_stride + r + i] = reduce8(acc[i][t]);
}

template <bool F16, int R, int T>
void float_rows(const MatmulArgs& a, int t0) {
  int64_t r = a.r0;
  for (; r + R <= a.r1; r += R) float_tile<F16, R, T>(a, r, t0);
  for (; r < a.r1; ++r) float_tile<F16, 1, T>(a, r, t0);
}

template <bool F16>
void matmul_float(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  if (a.B == 1) {
    float_rows<F16, 4, 1>(a, 0);
    return;
  }
  for (int t0 = 0; t0 < a.B; t0 += 4) {
    switch (a.B - t0 >= 4 ? 4 : a.B - t0) {
      case 1: float_rows<F16, 4, 1>(a, t0); break;
      case 2: float_rows<F16, 2, 2>(a, t0); break;
      case 3: float_rows<F16, 2, 3>(a, t0); break;
      default: float_rows<F16, 2, 4>(a, t0); break;
    }
  }
}


}  // namespace

namespace x86 {
void matmul_f16_f32(const MatmulArgs& a) { matmul_float<true>(a); }
void matmul_f32_f32(const MatmulArgs& a) { matmul_float<false>(a); }
}  // namespace x86

}  // namespace r1pi

#endif
