// The x86 float matrix products (F32, F16 and BF16 weights, float activations) and attention's weighted
// sums of F32, F16 and Q8_0 value rows, as templates that each x86 file building them instantiates
// with its own flags (kernels_x86.h has the rules): kernels_x86_float.cpp for every x86 backend
// (AVX2 + FMA + F16C, 16 vector registers) and kernels_avx512_vnni.cpp the products again with
// AVX-512VL's 32 registers (a larger tile) and the F32 weighted sums in 512-bit registers. R rows
// x T tokens (or R rows x W vectors of elements) per tile, each element with its own accumulator
// in the recipe's order (kernels.h), so the tiling never changes a result.
//
// Both stream from memory (decode attention reads the KV cache once per token, the float weights
// once per forward) and prefetch their own stream a fixed distance ahead into L2 (_MM_HINT_T1):
// with the arithmetic in between, the hardware prefetchers alone kept only about a quarter of the
// memory's rate in flight, and T0 hints (into L1) gained little for the value rows, whose tiles
// visit a block's lines column by column (bench/README.md, "Attention at the bandwidth limit").
// A prefetch never faults, so one past the end of a stream is harmless.
#pragma once

#include "neon/kernels_x86.h"
#include "neon/row_tiles.h"

#if defined(__x86_64__) || defined(__i386__)

namespace r1pi {

namespace {

// How far ahead the matrix product's rows (keys) and the weighted sum's value rows are prefetched.
constexpr int64_t kFloatRowsAhead = 12288;  // bytes past the element being read
constexpr int64_t kValuesAhead = 32768;     // bytes past the position being read (at least 32 rows)

// reduce8 of eight registers at once: lane j of the result is reduce8(x[j]), bit for bit (the
// same additions of the same pairs: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))).
R1PI_INLINE __m256 reduce8x8(const __m256* x) {
  // (lo + hi) of two registers: [s(a) | s(b)]. Pairs (0, 4), (1, 5), (2, 6), (3, 7) make the
  // lanes of the result come out in the order 0 .. 7.
  const auto halves = [](__m256 a, __m256 b) {
    return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
  };
  const __m256 u[4] = {halves(x[0], x[4]), halves(x[1], x[5]), halves(x[2], x[6]), halves(x[3], x[7])};
  const __m256 v0 = _mm256_add_ps(_mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                  _mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 v1 = _mm256_add_ps(_mm256_shuffle_ps(u[2], u[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                  _mm256_shuffle_ps(u[2], u[3], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm256_add_ps(_mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1)));
}

template <FloatRow K, int R, int T>
R1PI_INLINE void float_tile(const MatmulArgs& a, int64_t r, int t0) {
  const uint8_t* rows[R];
  const float* xs[T];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
    xs[t] = reinterpret_cast<const float*>(a.x + size_t(t0 + t) * a.x_row_bytes);
  __m256 acc[R][T];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
  const int64_t n8 = a.n & ~int64_t(7);
  // Each row prefetches its line kFloatRowsAhead bytes on once per 64 bytes it reads: spread over
  // the loop rather than a burst per tile (a burst of the tile's lines was slower, bench/README.md).
  constexpr int64_t kLine = 64 / row_elem_bytes(K);  // elements per line
  for (int64_t e = 0; e < n8; e += 8) {
    if (e % kLine == 0) {
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i)
        _mm_prefetch(reinterpret_cast<const char*>(rows[i]) + e * row_elem_bytes(K) + kFloatRowsAhead, _MM_HINT_T1);
    }
    __m256 x[T];  // each token's eight activations, loaded once for the R rows
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) x[t] = _mm256_loadu_ps(xs[t] + e);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w8<K>(rows[i], e);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) acc[i][t] = _mm256_fmadd_ps(w, x[t], acc[i][t]);
    }
  }
  if (const int rem = int(a.n - n8)) {
    const __m256 m = _mm256_castsi256_ps(lane_mask(rem));
    __m256 x[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) x[t] = load_partial(xs[t] + n8, rem);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w_partial<K>(rows[i], n8, rem);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)
        acc[i][t] = _mm256_blendv_ps(
            acc[i][t], _mm256_fmadd_ps(w, x[t], acc[i][t]), m);
    }
  }
  if constexpr (R == 4 && T % 2 == 0) {
    // Two tokens' four rows per register: [rows r..r+3 of token t | of token t + 1].
#pragma GCC unroll 4
    for (int t = 0; t < T; t += 2) {
      const __m256 g[8] = {acc[0][t], acc[1][t], acc[2][t], acc[3][t],
                           acc[0][t + 1], acc[1][t + 1], acc[2][t + 1], acc[3][t + 1]};
      const __m256 s = reduce8x8(g);
      _mm_storeu_ps(a.out + int64_t(t0 + t) * a.out_stride + r, _mm256_castps256_ps128(s));
      _mm_storeu_ps(a.out + int64_t(t0 + t + 1) * a.out_stride + r, _mm256_extractf128_ps(s, 1));
    }
  } else {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) a.out[int64_t(t0 + t) * a.out_stride + r + i] = reduce8(acc[i][t]);
  }
}

template <FloatRow K, int R, int T>
void float_rows(const MatmulArgs& a, int t0) {
  int64_t r = a.r0;
  for (; r + R <= a.r1; r += R) float_tile<K, R, T>(a, r, t0);
  for (; r < a.r1; ++r) float_tile<K, 1, T>(a, r, t0);
}

// Tiles of 2 rows x 4 tokens (8 accumulators, the four tokens' activations and a row's vector in
// registers). With kRegs = 32 (AVX-512VL) and more than four tokens, 4 x 4: the rows are read
// again for every four tokens (from cache), and the larger tile does more per load. Four tokens
// or fewer (decode attention's scores: a KV head's keys against its four query heads) read each
// row once from memory, and there the 2 x 4 tile kept the stream faster (bench/README.md).
template <FloatRow K, int kRegs>
void matmul_float(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  if (a.B == 1) {
    float_rows<K, 4, 1>(a, 0);
    return;
  }
  constexpr int R4 = kRegs >= 32 ? 4 : 2;
  for (int t0 = 0; t0 < a.B; t0 += 4) {
    switch (a.B - t0 >= 4 ? 4 : a.B - t0) {
      case 1: float_rows<K, 4, 1>(a, t0); break;
      case 2: float_rows<K, 2, 2>(a, t0); break;
      case 3: float_rows<K, 2, 3>(a, t0); break;
      default:
        if (a.B > 4) float_rows<K, R4, 4>(a, t0);
        else float_rows<K, 2, 4>(a, t0);
        break;
    }
  }
}

// ---- weighted sums (attention's values) ----
// R output rows x W vectors of eight elements from element i stay in registers over positions
// [t0, t1): each value vector is loaded once for the R rows. A tile that prefetches (Pf) fetches
// each line of its part of the row kValuesAhead bytes on, so that the tiles of the first row
// prefetch the whole stream once, spread over the arithmetic. Tail: the last n % 8 elements through
// masked loads and stores of the same fma.
template <FloatRow K, int R, int W, bool Tail, bool Pf = true>
R1PI_INLINE void weighted_tile(const WeightedSumArgs& a, int r0, int64_t i, int64_t t0, int64_t t1,
                               int64_t pf_rows, int rem) {
  const __m256i mask = lane_mask(rem);
  float* o[R];
  __m256 acc[R][W];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    o[r] = a.out + (r0 + r) * a.out_stride + i;
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w)
      acc[r][w] = Tail ? _mm256_maskload_ps(o[r] + 8 * w, mask) : _mm256_loadu_ps(o[r] + 8 * w);
  }
  const float* p = a.p + r0 * a.p_stride;
  const size_t col = size_t(i) * row_elem_bytes(K);
  constexpr int kTileBytes = W * 8 * row_elem_bytes(K);  // of each value row
  const uint8_t* row = a.v + size_t(t0) * a.v_row_bytes;
  const int64_t pf_end = a.T - pf_rows;  // no prefetch past the last position
  for (int64_t t = t0; t < t1; ++t, row += a.v_row_bytes) {
    if (Pf && t < pf_end) {
      const char* ahead = reinterpret_cast<const char*>(row + size_t(pf_rows) * a.v_row_bytes + col);
#pragma GCC unroll 8
      for (int l = 0; l < kTileBytes; l += 64) _mm_prefetch(ahead + l, _MM_HINT_T1);
    }
    __m256 v[W];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) v[w] = Tail ? load_w_partial<K>(row, i, rem) : load_w8<K>(row, i + 8 * w);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_broadcast_ss(p + r * a.p_stride + t);
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) acc[r][w] = _mm256_fmadd_ps(pr, v[w], acc[r][w]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) {
      if (Tail) _mm256_maskstore_ps(o[r] + 8 * w, mask, acc[r][w]);
      else _mm256_storeu_ps(o[r] + 8 * w, acc[r][w]);
    }
}

// F32 rows: 64 elements at a time one row after another (W = 8: 256 contiguous bytes of each value
// row, which stream faster than a 64-byte column of R rows; the rows after the first find the
// block's values in L1, and only the first row's tiles prefetch). Then, and for F16 rows (where the
// wide tiles were slower), 16 elements at a time for all R rows (bench/README.md). Elements from i
// on (the 512-bit tiles below do those before it).
template <FloatRow K, int R>
void weighted_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1, int64_t pf_rows, int64_t i = 0) {
  const int64_t n8 = a.n & ~int64_t(7);
  for (; K == FloatRow::F32 && i + 64 <= n8; i += 64)
#pragma GCC unroll 4
    for (int r = r0; r < r0 + R; ++r) {
      if (r == 0) weighted_tile<K, 1, 8, false, true>(a, r, i, t0, t1, pf_rows, 0);
      else weighted_tile<K, 1, 8, false, false>(a, r, i, t0, t1, pf_rows, 0);
    }
  for (; i + 16 <= n8; i += 16) weighted_tile<K, R, 2, false>(a, r0, i, t0, t1, pf_rows, 0);
  if (i < n8) weighted_tile<K, R, 1, false>(a, r0, i, t0, t1, pf_rows, 0);
  if (n8 < a.n) weighted_tile<K, R, 1, true>(a, r0, n8, t0, t1, pf_rows, int(a.n - n8));
}

// Positions in blocks of kBlock: a block's value rows (16 KB of F32 at head_dim 128) stay in L1
// while every row tile and column of the block passes over them.
// rows.template operator()<R>(r0, t0, t1, pf_rows) does R rows from r0 over positions [t0, t1).
template <class Rows>
void weighted_blocks(const WeightedSumArgs& a, Rows&& rows) {
  constexpr int64_t kBlock = 32;
  const int64_t pf_rows = a.v_row_bytes ? (kValuesAhead + int64_t(a.v_row_bytes) - 1) / int64_t(a.v_row_bytes) : 0;
  const int64_t ahead = pf_rows < kBlock ? kBlock : pf_rows;
  for (int64_t t0 = 0; t0 < a.T; t0 += kBlock)
    for_row_tiles(a.R, rows, t0, min64(a.T, t0 + kBlock), ahead);
}

template <FloatRow K>
void weighted_sum(const WeightedSumArgs& a) {
  weighted_blocks(a, [&]<int R>(int r, int64_t t0, int64_t t1, int64_t pf_rows) {
    weighted_rows<K, R>(a, r, t0, t1, pf_rows);
  });
}

#if defined(__AVX512F__)
// F32 rows in 512-bit registers (the AVX-512 backend): R rows (up to 4) x 64 elements per tile, 16
// accumulators, each value vector loaded once for the R rows; the first row tile of a column
// prefetches its four lines of the row. On an AVX-512 host this streamed faster than the 256-bit
// row-at-a-time tiles (bench/README.md); the last n % 64 elements go through those.
template <int R, bool Pf>
R1PI_INLINE void weighted_tile_512(const WeightedSumArgs& a, int r0, int64_t i, int64_t t0, int64_t t1,
                                   int64_t pf_rows) {
  constexpr int W = 4;
  __m512 acc[R][W];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) acc[r][w] = _mm512_loadu_ps(a.out + (r0 + r) * a.out_stride + i + 16 * w);
  const float* p = a.p + r0 * a.p_stride;
  const uint8_t* row = a.v + size_t(t0) * a.v_row_bytes + size_t(i) * 4;
  const int64_t pf_end = a.T - pf_rows;
  for (int64_t t = t0; t < t1; ++t, row += a.v_row_bytes) {
    if (Pf && t < pf_end) {
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w)
        _mm_prefetch(reinterpret_cast<const char*>(row + size_t(pf_rows) * a.v_row_bytes) + 64 * w, _MM_HINT_T1);
    }
    __m512 v[W];
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) v[w] = _mm512_loadu_ps(reinterpret_cast<const float*>(row) + 16 * w);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 pr = _mm512_set1_ps(p[r * a.p_stride + t]);
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w) acc[r][w] = _mm512_fmadd_ps(pr, v[w], acc[r][w]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int w = 0; w < W; ++w) _mm512_storeu_ps(a.out + (r0 + r) * a.out_stride + i + 16 * w, acc[r][w]);
}

inline void weighted_sum_f32_512(const WeightedSumArgs& a) {
  weighted_blocks(a, [&]<int R>(int r, int64_t t0, int64_t t1, int64_t pf_rows) {
    int64_t i = 0;
    for (; i + 64 <= a.n; i += 64) {
      if (r == 0) weighted_tile_512<R, true>(a, r, i, t0, t1, pf_rows);
      else weighted_tile_512<R, false>(a, r, i, t0, t1, pf_rows);
    }
    weighted_rows<FloatRow::F32, R>(a, r, t0, t1, pf_rows, i);
  });
}
#endif

// Q8_0 value rows: R rows x 16 elements (half a block) per tile; pd = p_t * d is the same float
// in every lane, so the broadcast product equals the scalar one. The tile of a block's first half
// prefetches the block's 34 bytes of the row pf_rows on (they straddle at most two lines).
template <int R>
void weighted_q8_0_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1, int64_t pf_rows) {
  const float* lut = f16_table();
  const float* p = a.p + r0 * a.p_stride;
  const int64_t pf_end = a.T - pf_rows;
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
      if (in_blk == 0 && t < pf_end) {
        const char* f = reinterpret_cast<const char*>(b + size_t(pf_rows) * a.v_row_bytes);
        _mm_prefetch(f, _MM_HINT_T1);
        _mm_prefetch(f + sizeof(block_q8_0) - 1, _MM_HINT_T1);
      }
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

[[maybe_unused]] void weighted_q8_0(const WeightedSumArgs& a) {
  weighted_blocks(a, [&]<int R>(int r, int64_t t0, int64_t t1, int64_t pf_rows) {
    weighted_q8_0_rows<R>(a, r, t0, t1, pf_rows);
  });
}

}  // namespace

}  // namespace r1pi

#endif
