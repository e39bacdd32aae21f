// The matrix products of the weight types whose blocks' factors come from a super-block of eight
// blocks (Q4_K, Q5_K, Q4_1, Q5_1, IQ4_XS, Q2_K, Q3_K) on every x86 backend, most of them with a
// min part: the recipe of kernels.h, byte for byte.
//
// Per super-block (group) and row the policy decodes its head once (scales, mins, d), and per
// token the eight blocks' factors d_b come from a vector multiply or two; each block is then the
// policy's exact lane sums (lanes: dot4_add, with the 16-element sub-blocks' scales in the integer
// sums for Q2_K / Q3_K), a conversion and one fma per lane, as Q8_0's. After the eight blocks the
// min part is one vector fma: lane s takes block s's. Row tiles run as R streams over the row
// range, as kernels_x86_quant.h's few_rows; more than four tokens go four at a time over groups
// of rows that stay in cache. AVX-512 runs the Q4_K / Q5_K tiles in row pairs (min_tile_pairs).
//
// A policy P gives
//   Isa (dot4_add), kGroupBytes (a super-block's bytes: eight blocks of weights), kSums (which
//   sums of each activation block its min part takes), kPartialGroups (rows of 32k elements: a
//   row's last group may hold fewer than eight blocks, Q4_1 and Q5_1), kRowPairs (min_tile_pairs);
//   Head head(group, lut, count): what the group's blocks share, from its first count blocks;
//   factors(head, dx): the eight blocks' d_b from the tokens' eight scales;
//   unpack<k>(head, group): block k's weights, once for all tokens; lanes(w, token(x)): float(p_j)
//     exact;
//   min_part(head, dx, s0, s1, acc): acc with the min part added (kSums != None).
#pragma once
#include <type_traits>

#include "ggml/q4_K_layout.h"
#include "neon/kernels_x86_quant.h"

namespace r1pi {
namespace {

// Which sums of each activation block a min part takes: none (IQ4_XS, Q3_K), the sum of its 32
// quants (Q4_K, Q5_K, Q4_1, Q5_1), or the sums of its halves (Q2_K's 16-element sub-blocks).
enum class XSums { None, Block, Halves };

// A policy's constants (what each means: above), and the activation block as lanes takes it: the
// quants as they are, unless a policy has its own token() (once per token and block, for all rows).
template <class I, int64_t GroupBytes, XSums Sums, bool PartialGroups = false, bool RowPairs = false>
struct GroupPolicy {
  using Isa = I;
  static constexpr int64_t kGroupBytes = GroupBytes;
  static constexpr XSums kSums = Sums;
  static constexpr bool kPartialGroups = PartialGroups;
  static constexpr bool kRowPairs = RowPairs;
  using TokenBlock = __m256i;
  static R1PI_INLINE __m256i token(__m256i x) { return x; }
  // With AVX-512, policies that set kBlockPairs give unpack2<k> (blocks k and k + 1, k even),
  // lanes2 and, where they have their own token(), token2 and TokenPair.
  static constexpr bool kBlockPairs = false;
};

// The activations of one call, token major (token t's block b at t * stride + b, stride nb rounded
// up to a multiple of 8 with zeros after the row), so that a group's eight sit together: each
// block's scale and the exact sums of its quants (s0: the block's, or its first half's; s1: its
// second half's).
struct MinTermPrep {
  int64_t stride;
  const float* dx;
  const float* s0;
  const float* s1;
};

template <XSums S>
MinTermPrep prepare_min(const MatmulArgs& a, int64_t nb, const float* lut) {
  const int64_t stride = (nb + 7) & ~int64_t(7);
  const size_t per = size_t(stride) * size_t(a.B);
  float* dx = static_cast<float*>(tl_prep.get(sizeof(float) * 3 * per));
  float* s0 = dx + per;
  float* s1 = s0 + per;
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int t = 0; t < a.B; ++t) {
    const uint8_t* blk = a.x + size_t(t) * a.x_row_bytes;
    const size_t row = size_t(t) * size_t(stride);
    for (int64_t b = 0; b < nb; ++b, blk += sizeof(block_q8_0)) {
      dx[row + b] = lut[load_u16(blk)];
      if constexpr (S == XSums::None) continue;
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      // Lanes 0..3: the first 16 quants' sums of four, lanes 4..7 the last 16's.
      const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, x), ones16);
      if constexpr (S == XSums::Halves) {
        __m128i h = _mm_hadd_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_hadd_epi32(h, h);
        s0[row + b] = float(_mm_cvtsi128_si32(h));
        s1[row + b] = float(_mm_extract_epi32(h, 1));
      } else {
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
        s0[row + b] = float(_mm_cvtsi128_si32(h));
      }
    }
    for (int64_t b = nb; b < stride; ++b) dx[row + b] = s0[row + b] = s1[row + b] = 0.0f;
  }
  return {stride, dx, s0, s1};
}

// R rows x T tokens (from token 0 of x and pp) over all groups; acc[r][t] as the recipe's eight
// lanes. Each row prefetches pf bytes ahead of itself.
template <class P, int R, int T>
R1PI_INLINE void min_tile(const uint8_t* const* rows, const uint8_t* x, size_t x_row_bytes,
                          const MinTermPrep& pp, int64_t nb, __m256 (&acc)[R][T], const float* lut,
                          size_t pf) {
  constexpr int64_t kBlockBytes = P::kGroupBytes / 8;
  // Blocks [b, b + count) of every row: count is 8 but in a row's last, partial group (kTail).
  auto group = [&]<bool kTail>(int64_t b, int count) {
    const size_t at = size_t(b / 8) * P::kGroupBytes;
    typename P::Head head[R];
    alignas(32) float e[R][T][8];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      head[r] = P::head(rows[r] + at, lut, count);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        _mm256_store_ps(e[r][t], P::factors(head[r], _mm256_loadu_ps(pp.dx + size_t(t) * pp.stride + b)));
    }
    // Q is P, named through kTail so that the pair path's members (absent from policies without
    // kBlockPairs) are looked up only where the branch is taken: clang checks what does not
    // depend on the lambda's own parameters when the enclosing function is instantiated.
    using Q = std::conditional_t<kTail, P, P>;
    if constexpr (P::Isa::kVectorRegisters == 32 && P::kBlockPairs && !kTail) {
      // AVX-512, blocks k and k + 1 in one 512-bit register (lanes 0..7 and 8..15): the weights'
      // and the lanes' integer work once for both, then each block's fma in turn, as below.
      static_for<4>([&]<int kp>() {
        constexpr int k = 2 * kp;
        typename Q::TokenPair xv[T];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const uint8_t* xk = x + size_t(t) * x_row_bytes + (b + k) * int64_t(sizeof(block_q8_0)) + 2;
          xv[t] = Q::token2(_mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xk))),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xk + sizeof(block_q8_0))), 1));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          _mm_prefetch(reinterpret_cast<const char*>(rows[r] + at) + pf + k * kBlockBytes, _MM_HINT_T0);
          const auto w = Q::template unpack2<k>(head[r], rows[r] + at);
#pragma GCC unroll 4
          for (int t = 0; t < T; ++t) {
            const __m512 f = Q::lanes2(w, xv[t]);
            acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&e[r][t][k]), _mm512_castps512_ps256(f), acc[r][t]);
            acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&e[r][t][k + 1]), _mm512_extractf32x8_ps(f, 1), acc[r][t]);
          }
        }
      });
    } else static_for<8>([&]<int k>() {
      if (kTail && k >= count) return;
      typename P::TokenBlock xv[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
        xv[t] = P::token(_mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(x + size_t(t) * x_row_bytes + (b + k) * int64_t(sizeof(block_q8_0)) + 2)));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        if constexpr (k % 2 == 0)
          _mm_prefetch(reinterpret_cast<const char*>(rows[r] + at) + pf + k * kBlockBytes, _MM_HINT_T0);
        const auto w = P::template unpack<k>(head[r], rows[r] + at);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
          acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&e[r][t][k]), P::lanes(w, xv[t]), acc[r][t]);
      }
    });
    if constexpr (P::kSums != XSums::None) {
      const __m256 keep = _mm256_castsi256_ps(lane_mask(count));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const size_t i = size_t(t) * pp.stride + b;
          const __m256 m = P::min_part(head[r], _mm256_loadu_ps(pp.dx + i), _mm256_loadu_ps(pp.s0 + i),
                                       _mm256_loadu_ps(pp.s1 + i), acc[r][t]);
          acc[r][t] = kTail ? _mm256_blendv_ps(acc[r][t], m, keep) : m;
        }
    }
  };
  int64_t b = 0;
  for (; b + 8 <= nb; b += 8) group.template operator()<false>(b, 8);
  if constexpr (P::kPartialGroups)
    if (b < nb) group.template operator()<true>(b, int(nb - b));
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
      dx[t] = _mm512_broadcast_f32x8(_mm256_loadu_ps(pp.dx + size_t(t) * pp.stride + b));
      xs[t] = _mm512_broadcast_f32x8(_mm256_loadu_ps(pp.s0 + size_t(t) * pp.stride + b));
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
  const size_t from = size_t(t0) * size_t(pp.stride);
  const MinTermPrep tp{pp.stride, pp.dx + from, pp.s0 + from, pp.s1 + from};
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
      if constexpr (P::Isa::kVectorRegisters == 32 && RR % 2 == 0 && P::kRowPairs)
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
  const MinTermPrep pp = prepare_min<P::kSums>(a, nb, lut);
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

// A type's entries: its matrix product, and vec_dot as the product of one row and token.
template <class P>
constexpr TypeKernels min_term_entries() {
  return {.vec_dot = dot_via_matmul<matmul_min<P>>, .matmul = matmul_min<P>};
}

}  // namespace
}  // namespace r1pi
