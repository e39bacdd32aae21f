// The matrix products of the weight types with a min term (Q4_K, Q5_K) on every x86 backend: the
// recipe of kernels.h, byte for byte. A policy P gives its Isa (dot4_add), its Block and
// quants<k>(block): sub-block k's 32 unsigned values.
//
// Per super-block and row, the eight scale codes and mins are decoded once (k4_scales_mins), and
// per token the eight blocks' factors (d * x.d) * scale come from two vector multiplies; each
// block is then dot4_add (the exact lane sums of q * x.q: |q0 x0 + q1 x1| <= 2 * 31 * 127 keeps
// maddubs from saturating), a conversion and one fma per lane, as Q8_0's. After the eight blocks
// the min part is one vector fnmadd: lane s takes sub-block s's -(dmin * x_s.d) * (min_s * sum).
// Row tiles run as R streams over the row range, as kernels_x86_quant.h's few_rows; more than four
// tokens go four at a time over groups of rows that stay in cache. AVX-512 runs the tiles in row
// pairs (min_tile_pairs).
#pragma once

#include "ggml/q4_K_layout.h"
#include "neon/kernels_x86_quant.h"

namespace r1pi {
namespace {

// The activations of one call, token major (token t's block b at t * nb + b), so that a
// super-block's eight sit together: each block's scale and the exact sum of its 32 quants.
struct MinTermPrep {
  const float* dx;
  const float* xs;
};

inline MinTermPrep prepare_min(const MatmulArgs& a, int64_t nb, const float* lut) {
  float* dx = static_cast<float*>(tl_prep.get(sizeof(float) * 2 * size_t(nb) * size_t(a.B)));
  float* xs = dx + size_t(nb) * size_t(a.B);
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int t = 0; t < a.B; ++t) {
    const uint8_t* blk = a.x + size_t(t) * a.x_row_bytes;
    for (int64_t b = 0; b < nb; ++b, blk += sizeof(block_q8_0)) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, x), ones16);
      __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
      dx[size_t(t) * nb + b] = lut[load_u16(blk)];
      xs[size_t(t) * nb + b] = float(_mm_cvtsi128_si32(h));
    }
  }
  return {dx, xs};
}

// R rows x T tokens (from token 0 of x, dx and xs) over all super-blocks; acc[r][t] as the recipe's
// eight lanes. Each row prefetches pf bytes ahead of itself.
template <class P, int R, int T>
R1PI_INLINE void min_tile(const uint8_t* const* rows, const uint8_t* x, size_t x_row_bytes,
                          const MinTermPrep& pp, int64_t nb, __m256 (&acc)[R][T], const float* lut,
                          size_t pf) {
  using Block = typename P::Block;
  alignas(32) float e[R][T][8];
  alignas(32) float mins[R][8];
  for (int64_t b = 0; b < nb; b += 8) {
    const int64_t s = b / 8;
    for (int r = 0; r < R; ++r) {
      const Block* sb = reinterpret_cast<const Block*>(rows[r]) + s;
      alignas(16) uint8_t codes[16];
      k4_scales_mins(sb->scales, codes);
      const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(codes));
      const __m256 scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(c));
      _mm256_store_ps(mins[r], _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(c, 8))));
      const __m256 dw = _mm256_broadcast_ss(lut + sb->d);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        _mm256_store_ps(e[r][t], _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_loadu_ps(pp.dx + size_t(t) * nb + b)), scales));
    }
    static_for<8>([&]<int k>() {
      __m256i xv[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        xv[t] = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(x + size_t(t) * x_row_bytes + (b + k) * int64_t(sizeof(block_q8_0)) + 2));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const Block* sb = reinterpret_cast<const Block*>(rows[r]) + s;
        if constexpr (k % 2 == 0)
          _mm_prefetch(reinterpret_cast<const char*>(sb) + pf + k * (sizeof(Block) / 8), _MM_HINT_T0);
        const __m256i q = P::template quants<k>(sb);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const __m256 f = _mm256_cvtepi32_ps(P::Isa::dot4_add(_mm256_setzero_si256(), q, xv[t]));
          acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&e[r][t][k]), f, acc[r][t]);
        }
      }
    });
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const Block* sb = reinterpret_cast<const Block*>(rows[r]) + s;
      const __m256 dmin = _mm256_broadcast_ss(lut + sb->dmin), m = _mm256_load_ps(mins[r]);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const __m256 dmin_dx = _mm256_mul_ps(dmin, _mm256_loadu_ps(pp.dx + size_t(t) * nb + b));
        const __m256 m_xs = _mm256_mul_ps(m, _mm256_loadu_ps(pp.xs + size_t(t) * nb + b));
        acc[r][t] = _mm256_fnmadd_ps(dmin_dx, m_xs, acc[r][t]);
      }
    }
  }
}

// AVX-512: min_tile with rows 2h and 2h + 1 in one 512-bit register (lanes 0..7 and 8..15), each
// lane computed exactly as there with about half the instructions: the pair's factors sit in one
// register per token, and block k's are moved into place by one permute. P::quants2<k> gives the
// two rows' values of block k.
template <class P, int R, int T>
R1PI_INLINE void min_tile_pairs(const uint8_t* const* rows, const uint8_t* x, size_t x_row_bytes,
                                const MinTermPrep& pp, int64_t nb, __m256 (&acc)[R][T], const float* lut,
                                size_t pf) {
  using Block = typename P::Block;
  constexpr int H = R / 2;
  __m512 acc2[H][T];
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t)
      acc2[h][t] = _mm512_insertf32x8(_mm512_castps256_ps512(acc[2 * h][t]), acc[2 * h + 1][t], 1);
  for (int64_t b = 0; b < nb; b += 8) {
    const int64_t s = b / 8;
    __m512 dx[T], xs[T];
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      dx[t] = _mm512_broadcast_f32x8(_mm256_loadu_ps(pp.dx + size_t(t) * nb + b));
      xs[t] = _mm512_broadcast_f32x8(_mm256_loadu_ps(pp.xs + size_t(t) * nb + b));
    }
    __m512 e[H][T], mins[H], dmin[H];
    const Block* sb[R];
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) {
      alignas(16) uint8_t c[2][16];  // each row's eight scales, then its eight mins
      for (int i = 0; i < 2; ++i) {
        sb[2 * h + i] = reinterpret_cast<const Block*>(rows[2 * h + i]) + s;
        k4_scales_mins(sb[2 * h + i]->scales, c[i]);
      }
      const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(c[0]));
      const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(c[1]));
      const __m512 scales = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpacklo_epi64(lo, hi)));
      mins[h] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpackhi_epi64(lo, hi)));
      const __m512 dw = _mm512_insertf32x8(_mm512_set1_ps(lut[sb[2 * h]->d]), _mm256_set1_ps(lut[sb[2 * h + 1]->d]), 1);
      dmin[h] = _mm512_insertf32x8(_mm512_set1_ps(lut[sb[2 * h]->dmin]), _mm256_set1_ps(lut[sb[2 * h + 1]->dmin]), 1);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) e[h][t] = _mm512_mul_ps(_mm512_mul_ps(dw, dx[t]), scales);
    }
    static_for<8>([&]<int k>() {
      __m512i xv[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        xv[t] = _mm512_broadcast_i64x4(_mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(x + size_t(t) * x_row_bytes + (b + k) * int64_t(sizeof(block_q8_0)) + 2)));
      const __m512i pick = _mm512_setr_epi32(k, k, k, k, k, k, k, k, 8 + k, 8 + k, 8 + k, 8 + k, 8 + k, 8 + k, 8 + k, 8 + k);
#pragma GCC unroll 8
      for (int h = 0; h < H; ++h) {
        if constexpr (k % 2 == 0) {
          _mm_prefetch(reinterpret_cast<const char*>(sb[2 * h]) + pf + k * (sizeof(Block) / 8), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(sb[2 * h + 1]) + pf + k * (sizeof(Block) / 8), _MM_HINT_T0);
        }
        const __m512i q = P::template quants2<k>(sb[2 * h], sb[2 * h + 1]);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, xv[t]));
          acc2[h][t] = _mm512_fmadd_ps(_mm512_permutexvar_ps(pick, e[h][t]), f, acc2[h][t]);
        }
      }
    });
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h)
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        acc2[h][t] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin[h], dx[t]), _mm512_mul_ps(mins[h], xs[t]), acc2[h][t]);
  }
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) {
      acc[2 * h][t] = _mm512_castps512_ps256(acc2[h][t]);
      acc[2 * h + 1][t] = _mm512_extractf32x8_ps(acc2[h][t], 1);
    }
}

// Rows [r0, r1) for T tokens from token t0, (r1 - r0) / R * R of them as R streams (few_rows), the
// rest one by one.
template <class P, int R, int T>
void min_rows(const MatmulArgs& a, const MinTermPrep& pp, int64_t nb, int64_t r0, int64_t r1, int t0,
              const float* lut) {
  const uint8_t* x = a.x + size_t(t0) * a.x_row_bytes;
  const MinTermPrep tp{pp.dx + size_t(t0) * nb, pp.xs + size_t(t0) * nb};
  const int64_t ahead = min64(int64_t(a.w_row_bytes), kPrefetchAhead);
  const int64_t q = (r1 - r0) / R;
  auto run = [&]<int RR>(int64_t first, int64_t count, int64_t stride) {
    for (int64_t r = first; r < first + count; ++r) {
      __m256 acc[RR][T];
      const uint8_t* rows[RR];
      for (int i = 0; i < RR; ++i) {
        rows[i] = a.w + size_t(r + i * stride) * a.w_row_bytes;
        for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
      }
      if constexpr (P::Isa::kVectorRegisters == 32 && RR % 2 == 0)
        min_tile_pairs<P, RR, T>(rows, x, a.x_row_bytes, tp, nb, acc, lut, size_t(ahead));
      else
        min_tile<P, RR, T>(rows, x, a.x_row_bytes, tp, nb, acc, lut, size_t(ahead));
      for (int i = 0; i < RR; ++i)
        for (int t = 0; t < T; ++t) a.out[int64_t(t0 + t) * a.out_stride + r + i * stride] = reduce8(acc[i][t]);
    }
  };
  run.template operator()<R>(r0, q, q);
  run.template operator()<1>(r0 + q * R, r1 - (r0 + q * R), 0);
}

template <class P, int T>
void min_tokens(const MatmulArgs& a, const MinTermPrep& pp, int64_t nb, int64_t r0, int64_t r1, int t0,
                const float* lut) {
  // Four rows keep 4 x T accumulators in flight; AVX2's 16 registers hold that up to 2 tokens.
  // (AVX-512's row pairs: eight rows measured no faster than four.)
  constexpr int R = P::Isa::kVectorRegisters == 32 || T <= 2 ? 4 : 2;
  min_rows<P, R, T>(a, pp, nb, r0, r1, t0, lut);
}

template <class P>
void matmul_min(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  const int64_t nb = a.n / QK8_0;
  const float* lut = f16_table();
  const MinTermPrep pp = prepare_min(a, nb, lut);
  // Decode streams all rows once; a batch goes over groups of rows, each group's weights read
  // from memory by the first four tokens and from cache by the rest.
  const int64_t group = a.B <= 4 ? a.r1 - a.r0 : 32;
  for (int64_t g = a.r0; g < a.r1; g += group) {
    const int64_t g1 = min64(a.r1, g + group);
    for (int t0 = 0; t0 < a.B; t0 += 4) {
      switch (a.B - t0 >= 4 ? 4 : a.B - t0) {
        case 1: min_tokens<P, 1>(a, pp, nb, g, g1, t0, lut); break;
        case 2: min_tokens<P, 2>(a, pp, nb, g, g1, t0, lut); break;
        case 3: min_tokens<P, 3>(a, pp, nb, g, g1, t0, lut); break;
        default: min_tokens<P, 4>(a, pp, nb, g, g1, t0, lut); break;
      }
    }
  }
}

// A min-term type's entries: its matrix product, and vec_dot as the product of one row and token.
template <class P>
constexpr TypeKernels min_term_entries() {
  return {.vec_dot = dot_via_matmul<matmul_min<P>>, .matmul = matmul_min<P>};
}

}  // namespace
}  // namespace r1pi
