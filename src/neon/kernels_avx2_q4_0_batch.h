// Q4_0 products of 5 tokens or more (prefill and speculative verification) in 256-bit registers
// without VNNI, for the avx2 backend only (included by kernels_avx2.cpp). The same bytes as every
// other backend (recipe in kernels.h): each output keeps its eight lanes, its own fma chain and
// its block order, and reduce8 pairs the lanes at the end.
//
// The tokens lie across the register instead of the lanes: a register holds lane j of four tokens
// in its low half and lane j + 4 of the same four in its high half, so a tile of 8 tokens is 8
// registers (j = 0..3, tokens 0..3 or 4..7). Then a weight block needs no correction and no
// per-token broadcast of its scale:
//   - one vpshufd of the block's nibbles (q4_nibbles: lanes 0..3 low, 4..7 high) gives lane j's
//     four weights in every dword of the low half and lane j + 4's in the high half, as unsigned q;
//   - the activations enter signed, and their offset correction bits(1.5 * 2^23) - 8 * (the
//     token-lane's sum) is rearranged with them once per call, a memory operand of the addition;
//   - the scales d = d_w * d_x of four tokens are one multiply ([d_x of the four] twice over).
// Per token and block that is maddubs, madd, the correction's addition, the magic's subtraction
// and the fma (the lane-major path also broadcasts each token's scale and makes the weight-side
// correction per block). The sum of a token's lanes is the recipe's reduce8: lanes j and j + 4
// are the two halves of one register, the rest are additions of whole registers in its order.
#pragma once

#include "neon/kernels_x86_policies.h"

namespace r1pi {
namespace {

// The activations of one call, tile by tile (8 tokens, the last tile padded with zeros) so that a
// tile's blocks follow each other in memory; for tile i and block b, at slot i * nb + b:
//   xs[8 * slot + 2 * j + h]: lane j of tokens 4h .. 4h + 3 (low half) and lane j + 4 (high
//     half), token 4h + u in dword u of each half (signed quants);
//   corr[...]: the same places, bits(1.5 * 2^23) - 8 * (the four quants' sum);
//   dx[2 * slot + h]: the scales of tokens 4h .. 4h + 3, twice ([d0 d1 d2 d3 d0 d1 d2 d3]).
struct TokenLanesX {
  int64_t nb;
  const __m256i* xs;
  const __m256i* corr;
  const __m256* dx;
};

thread_local Scratch tl_token_lanes;

// Four tokens' blocks (one register each, lanes 0..7 in dwords 0..7) -> for j = 0..3 the register
// of lanes j (low half) and j + 4 (high half), token u in dword u of each half: a 4 x 4 transpose
// of dwords within each half.
R1PI_INLINE void transpose_lanes(const __m256i (&x)[4], __m256i (&out)[4]) {
  const __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpacklo_epi32(x[2], x[3]);
  const __m256i t2 = _mm256_unpackhi_epi32(x[0], x[1]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
  out[0] = _mm256_unpacklo_epi64(t0, t1);
  out[1] = _mm256_unpackhi_epi64(t0, t1);
  out[2] = _mm256_unpacklo_epi64(t2, t3);
  out[3] = _mm256_unpackhi_epi64(t2, t3);
}

inline TokenLanesX prepare_token_lanes(const MatmulArgs& a, int64_t nb) {
  const float* lut = f16_table();
  const int tiles = (a.B + 7) / 8;
  const size_t slots = size_t(tiles) * size_t(nb);
  uint8_t* base = static_cast<uint8_t*>(tl_token_lanes.get(slots * (256 + 256 + 64) + 64));
  __m256i* xs = reinterpret_cast<__m256i*>(base);
  __m256i* corr = reinterpret_cast<__m256i*>(base + slots * 256);
  __m256* dx = reinterpret_cast<__m256*>(base + slots * 512);
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  const __m256i magic_bits = _mm256_set1_epi32(kMagicBits);
  for (int i = 0; i < tiles; ++i)
    for (int64_t b = 0; b < nb; ++b) {
      const size_t slot = size_t(i) * nb + b;
      const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
      for (int h = 0; h < 2; ++h) {
        __m256i q[4], lanes[4];
        alignas(16) float d[4];
        for (int u = 0; u < 4; ++u) {
          const int t = 8 * i + 4 * h + u;
          // Padding tokens: x = 0, scale 0 (computed and dropped).
          const uint8_t* tb = blk + size_t(t) * a.x_row_bytes;
          q[u] = t < a.B ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tb + 2)) : _mm256_setzero_si256();
          d[u] = t < a.B ? lut[load_u16(tb)] : 0.0f;
        }
        transpose_lanes(q, lanes);
        for (int j = 0; j < 4; ++j) {
          xs[8 * slot + 2 * j + h] = lanes[j];
          const __m256i sums = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, lanes[j]), ones16);
          corr[8 * slot + 2 * j + h] = _mm256_sub_epi32(magic_bits, _mm256_slli_epi32(sums, 3));
        }
        const __m128 d4 = _mm_load_ps(d);
        dx[2 * slot + h] = _mm256_set_m128(d4, d4);
      }
    }
  return {nb, xs, corr, dx};
}

// Row `row` x token tile `tile` over blocks [kb0, kb1), into acc[j][h] (lanes j, j + 4 of tokens
// 4h .. 4h + 3); with kPrefetch each block prefetches the block pf bytes on.
template <bool kPrefetch>
R1PI_INLINE void token_lanes_tile(const uint8_t* row, const TokenLanesX& px, int tile, int64_t kb0,
                                  int64_t kb1, __m256 (&acc)[4][2], const float* lut, size_t pf) {
  const __m256 magic = _mm256_set1_ps(kMagic);
  const __m256i ones16 = _mm256_set1_epi16(1);
  // Pointers that step with the blocks.
  const size_t slot0 = size_t(tile) * px.nb + kb0;
  const __m256i* xp = px.xs + 8 * slot0;
  const __m256i* cp = px.corr + 8 * slot0;
  const __m256* dp = px.dx + 2 * slot0;
  const uint8_t* blk = row + kb0 * int64_t(sizeof(block_q4_0));
  for (int64_t b = kb0; b < kb1; ++b, xp += 8, cp += 8, dp += 2, blk += sizeof(block_q4_0)) {
    if (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(blk + pf), _MM_HINT_T0);
    const __m256i nib = q4_nibbles(blk + 2);
    const __m256 dw = _mm256_broadcast_ss(lut + load_u16(blk));
    const __m256 d[2] = {_mm256_mul_ps(dw, dp[0]), _mm256_mul_ps(dw, dp[1])};
    static_for<4>([&]<int j>() {
      const __m256i w = _mm256_shuffle_epi32(nib, j * 0x55);
      static_for<2>([&]<int h>() {
        const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(w, xp[2 * j + h]), ones16);
        const __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_add_epi32(p, cp[2 * j + h])), magic);
        acc[j][h] = _mm256_fmadd_ps(d[h], f, acc[j][h]);
      });
    });
  }
}

// The eight tokens' reduce8 at once: [tokens 0..3 | 4..7] of ((a0 + a4) + (a2 + a6)) + ((a1 + a5)
// + (a3 + a7)).
R1PI_INLINE __m256 reduce_token_lanes(const __m256 (&acc)[4][2]) {
  __m256 s[4];
  for (int j = 0; j < 4; ++j)
    s[j] = _mm256_add_ps(_mm256_permute2f128_ps(acc[j][0], acc[j][1], 0x20),
                         _mm256_permute2f128_ps(acc[j][0], acc[j][1], 0x31));
  return _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
}

constexpr int kLanesRowGroup = 32;        // rows whose weights stay in cache across the token tiles
constexpr int64_t kLanesBlockChunk = 32;  // blocks per pass: a tile's 576 bytes per block in L1

void matmul_q4_0_token_lanes(const MatmulArgs& a) {
  const int64_t nb = a.n / QK8_0;
  const float* lut = f16_table();
  const TokenLanesX px = prepare_token_lanes(a, nb);
  const int tiles = (a.B + 7) / 8;
  thread_local Scratch tl_lanes_acc;
  __m256* accbuf = static_cast<__m256*>(tl_lanes_acc.get(sizeof(__m256) * 8 * kLanesRowGroup));
  for (int64_t rg = a.r0; rg < a.r1; rg += kLanesRowGroup) {
    const int64_t rg1 = min64(a.r1, rg + kLanesRowGroup);
    for (int tile = 0; tile < tiles; ++tile)
      for (int64_t kb0 = 0; kb0 < nb; kb0 += kLanesBlockChunk) {
        const int64_t kb1 = min64(nb, kb0 + kLanesBlockChunk);
        for (int64_t r = rg; r < rg1; ++r) {
          __m256 acc[4][2];
          __m256* saved = accbuf + (r - rg) * 8;
          for (int j = 0; j < 4; ++j)
            for (int h = 0; h < 2; ++h) acc[j][h] = kb0 == 0 ? _mm256_setzero_ps() : saved[2 * j + h];
          // The first token tile streams the weights from memory (each block prefetches the next
          // row's); later tiles find them in cache and prefetch nothing.
          const uint8_t* row = a.w + size_t(r) * a.w_row_bytes;
          if (tile == 0) token_lanes_tile<true>(row, px, tile, kb0, kb1, acc, lut, a.w_row_bytes);
          else token_lanes_tile<false>(row, px, tile, kb0, kb1, acc, lut, 0);
          if (kb1 < nb) {
            for (int j = 0; j < 4; ++j)
              for (int h = 0; h < 2; ++h) saved[2 * j + h] = acc[j][h];
            continue;
          }
          alignas(32) float out[8];
          _mm256_store_ps(out, reduce_token_lanes(acc));
          for (int u = 0; u < 8 && 8 * tile + u < a.B; ++u) a.out[int64_t(8 * tile + u) * a.out_stride + r] = out[u];
        }
      }
  }
}

}  // namespace
}  // namespace r1pi
