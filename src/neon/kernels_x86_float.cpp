// The x86 float matrix products (F16 and F32 weights, float activations) and attention's weighted
// sums of F32 and F16 value rows, built once with AVX2 + FMA + F16C for every x86 backend
// (kernels_x86.h has the rules for these files). R rows x T tokens (or R rows x W vectors of
// elements) per tile, each element with its own accumulator in the recipe's order (kernels.h), so
// the tiling never changes a result.
#include "neon/kernels_x86.h"
#include "neon/row_tiles.h"

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

// ---- weighted sums (attention's values) ----
// R output rows x W vectors of eight elements from element i stay in registers over positions
// [t0, t1): each value vector is loaded once for the R rows. The last n % 8 elements go through
// masked loads and stores of the same fma.
template <bool F16, int R, int W>
void weighted_tile(const WeightedSumArgs& a, int r0, int64_t i, int64_t t0, int64_t t1, int rem) {
  const __m256i mask = lane_mask(rem);
  float* o[R];
  __m256 acc[R][W];
  for (int r = 0; r < R; ++r) {
    o[r] = a.out + (r0 + r) * a.out_stride + i;
    for (int w = 0; w < W; ++w)
      acc[r][w] = rem ? _mm256_maskload_ps(o[r] + 8 * w, mask) : _mm256_loadu_ps(o[r] + 8 * w);
  }
  const float* p = a.p + r0 * a.p_stride;
  for (int64_t t = t0; t < t1; ++t) {
    const uint8_t* row = a.v + size_t(t) * a.v_row_bytes;
    __m256 v[W];
    for (int w = 0; w < W; ++w) v[w] = rem ? load_w_partial<F16>(row, i, rem) : load_w8<F16>(row, i + 8 * w);
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_broadcast_ss(p + r * a.p_stride + t);
      for (int w = 0; w < W; ++w) acc[r][w] = _mm256_fmadd_ps(pr, v[w], acc[r][w]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int w = 0; w < W; ++w) {
      if (rem) _mm256_maskstore_ps(o[r] + 8 * w, mask, acc[r][w]);
      else _mm256_storeu_ps(o[r] + 8 * w, acc[r][w]);
    }
}

template <bool F16, int R>
void weighted_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1) {
  const int64_t n8 = a.n & ~int64_t(7);
  int64_t i = 0;
  for (; i + 16 <= n8; i += 16) weighted_tile<F16, R, 2>(a, r0, i, t0, t1, 0);
  if (i < n8) weighted_tile<F16, R, 1>(a, r0, i, t0, t1, 0);
  if (n8 < a.n) weighted_tile<F16, R, 1>(a, r0, n8, t0, t1, int(a.n - n8));
}

// Positions in blocks of kBlock: a block's value rows (16 KB of F32 at head_dim 128) stay in L1
// while every row tile and column of the block passes over them; the next block is prefetched
// while the first tile reads this one, since the tiles visit a row's lines out of order.
// rows.template operator()<R>(r0, t0, t1) does R rows from r0 over positions [t0, t1).
template <class Rows>
void weighted_blocks(const WeightedSumArgs& a, size_t row_bytes, Rows&& rows) {
  constexpr int64_t kBlock = 32;
  for (int64_t t0 = 0; t0 < a.T; t0 += kBlock) {
    const int64_t t1 = min64(a.T, t0 + kBlock);
    for (int64_t t = t1; t < min64(a.T, t1 + kBlock); ++t)
      for (size_t b = 0; b < row_bytes; b += 64)
        _mm_prefetch(reinterpret_cast<const char*>(a.v + size_t(t) * a.v_row_bytes + b), _MM_HINT_T0);
    for_row_tiles(a.R, rows, t0, t1);
  }
}

template <bool F16>
void weighted_sum(const WeightedSumArgs& a) {
  weighted_blocks(a, size_t(a.n) * (F16 ? 2 : 4), [&]<int R>(int r, int64_t t0, int64_t t1) {
    weighted_rows<F16, R>(a, r, t0, t1);
  });
}

// Q8_0 value rows: R rows x 16 elements (half a block) per tile; pd = p_t * d is the same float
// in every lane, so the broadcast product equals the scalar one.
template <int R>
void weighted_q8_0_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1) {
  const float* lut = f16_table();
  const float* p = a.p + r0 * a.p_stride;
  for (int64_t i = 0; i < a.n; i += 16) {
    const int64_t blk = i / QK8_0, in_blk = i % QK8_0;
    float* o[R];
    __m256 acc[R][2];
    for (int r = 0; r < R; ++r) {
      o[r] = a.out + (r0 + r) * a.out_stride + i;
      acc[r][0] = _mm256_loadu_ps(o[r]);
      acc[r][1] = _mm256_loadu_ps(o[r] + 8);
    }
    for (int64_t t = t0; t < t1; ++t) {
      const uint8_t* b = a.v + size_t(t) * a.v_row_bytes + size_t(blk) * sizeof(block_q8_0);
      const __m256 d = _mm256_broadcast_ss(lut + load_u16(b));
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + in_blk));
      const __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
      const __m256 v1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)));
      for (int r = 0; r < R; ++r) {
        const __m256 pd = _mm256_mul_ps(_mm256_broadcast_ss(p + r * a.p_stride + t), d);
        acc[r][0] = _mm256_fmadd_ps(pd, v0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(pd, v1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_ps(o[r], acc[r][0]);
      _mm256_storeu_ps(o[r] + 8, acc[r][1]);
    }
  }
}

void weighted_q8_0(const WeightedSumArgs& a) {
  weighted_blocks(a, size_t(a.n / QK8_0) * sizeof(block_q8_0), [&]<int R>(int r, int64_t t0, int64_t t1) {
    weighted_q8_0_rows<R>(a, r, t0, t1);
  });
}

}  // namespace

namespace x86 {
void weighted_sum_q8_0(const WeightedSumArgs& a) { weighted_q8_0(a); }
void weighted_sum_f32(const WeightedSumArgs& a) { weighted_sum<false>(a); }
void weighted_sum_f16(const WeightedSumArgs& a) { weighted_sum<true>(a); }
void matmul_f16_f32(const MatmulArgs& a) { matmul_float<true>(a); }
void matmul_f32_f32(const MatmulArgs& a) { matmul_float<false>(a); }
}  // namespace x86

}  // namespace r1pi

#endif
