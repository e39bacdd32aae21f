// Quantised products of 5 tokens or more (prefill and speculative verification) in 512-bit
// registers, for the avx512-vnni backend only (included by kernels_avx512_vnni.cpp): one template
// over a block unpacker (kernels_avx512_batch_policies.h: Q4_0, Q8_0, Q6_K, Q4_K, Q5_K). The same
// bytes as every other backend (recipe in kernels.h): each output keeps its eight lanes, its own fma
// chain and its block order, and reduce8 pairs the lanes at the end.
//
// Two tokens share a register, their lanes interleaved: dword 2j + s is lane j of token 2p + s.
// Then one vpdpbusd, one subtraction and one fma serve two tokens, and the pair's scale
// d = d_w * d_x is one 64-bit broadcast ([d_t, d_t+1] repeated) from the row's eight products,
// which one multiply makes per weight block. The unpacker gives each weight block's 32 values with
// each dword twice, and the lanes' sums as floats exactly: where the weights are signed (Q4_0,
// Q8_0, Q6_K) the activations enter unsigned (x + 128) and the offset is taken off on the weight
// side: vpdpbusd adds the products to bits(M), which makes them the float M + the sum, and one
// float subtraction of M + 128 * (the lane's weight sum), made once per weight block by another
// vpdpbusd, leaves p_j exactly (both floats lie in M's binade, so their difference is exact); the
// unsigned weights of Q4_K and Q5_K take the activations as they are. The activations are
// rearranged once per call (prepare_pairs). On this design's test machine (Zen 5) the Q4_0 loop
// runs at about 0.6 of the rate its vpdpbusd alone would allow; the other ways tried
// (activation-side offsets, the scales by permute or by multiply, three or four rows per tile) were
// slower (bench/README.md).
//
// An unpacker U gives
//   kGroup (blocks per super-block: 1 or 8), kGroupBytes (a super-block's, or block's, bytes),
//   kUnsignedX (activations as x + 128), kMinTerm (a min part per super-block, Q4_K and Q5_K);
//   Head head(group, lut): what a super-block's (or block's) blocks share, once per row;
//   factors<k>(head, dx8): the eight tokens' d_b of block k;
//   unpack<k>(head, group): block k's weights, once for the tile's tokens;
//   lanes<k>(w, x, head): the pair's float(p_j), exact;
//   min_part(head, dxs, sums, acc) (kMinTerm): acc with the super-block's min part added.
#pragma once

#include "neon/kernels_x86_policies.h"

namespace r1pi {
namespace {

// The activations of one call in token pairs, tile by tile (8 tokens, the last tile padded with
// zeros) so that a tile's blocks follow each other in memory: for tile i, block b and pair p of
// the tile (tokens 8i + 2p and 8i + 2p + 1), at slot (i * nb + b) * 4 + p, 64 bytes of interleaved
// quants (x + 128 where the unpacker wants them unsigned); the tile's eight scales as floats at
// (i * nb + b) * 8. For a min part, per tile, super-block g and pair p, at ((i * ng + g) * 4 + p)
// * 32: the super-block's eight blocks' scales, then the exact sums of their quants, as floats in
// the paired order (dword 2s + u: block 8g + s of token 2p + u).
struct PairedX {
  int64_t nb;
  const __m512i* xs;
  const float* dx;
  const float* mins;
};

thread_local Scratch tl_pairs;

// The exact sum of 32 signed bytes (x + 128 summed in eights by vpsadbw, less 32 * 128).
R1PI_INLINE int32_t sum_i8(__m256i q) {
  const __m256i s = _mm256_sad_epu8(_mm256_xor_si256(q, _mm256_set1_epi8(int8_t(0x80))), _mm256_setzero_si256());
  const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return int32_t(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1)) - 32 * 128;
}

R1PI_INLINE __m512i interleave_dwords(__m256i even, __m256i odd) {
  const __m512i idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  return _mm512_permutex2var_epi32(_mm512_castsi256_si512(even), idx, _mm512_castsi256_si512(odd));
}

template <class U>
PairedX prepare_pairs(const MatmulArgs& a, int64_t nb) {
  const float* lut = f16_table();
  const int tiles = (a.B + 7) / 8;
  const int64_t ng = U::kMinTerm ? nb / 8 : 0;
  const size_t slots = size_t(tiles) * size_t(nb) * 4;
  const size_t min_floats = size_t(tiles) * size_t(ng) * 4 * 32;
  uint8_t* base = static_cast<uint8_t*>(tl_pairs.get(slots * 64 + slots * 8 + min_floats * 4 + 64));
  __m512i* xs = reinterpret_cast<__m512i*>(base);
  float* dx = reinterpret_cast<float*>(base + slots * 64);
  float* mins = dx + slots * 2;
  const __m256i flip = _mm256_set1_epi8(U::kUnsignedX ? int8_t(0x80) : 0);
  for (int i = 0; i < tiles; ++i)
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
      const size_t slot = (size_t(i) * nb + b) * 4;
      for (int p = 0; p < 4; ++p) {
        __m256i q[2];
        for (int s = 0; s < 2; ++s) {
          const int t = 8 * i + 2 * p + s;
          // Padding tokens: x = 0, scale 0; computed and dropped.
          const uint8_t* tb = blk + size_t(t) * a.x_row_bytes;
          q[s] = t < a.B ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tb + 2)) : _mm256_setzero_si256();
          const float d = t < a.B ? lut[load_u16(tb)] : 0.0f;
          dx[slot * 2 + 2 * p + s] = d;
          if constexpr (U::kMinTerm) {
            float* m = mins + ((size_t(i) * ng + size_t(b / 8)) * 4 + p) * 32 + 2 * (b % 8) + s;
            m[0] = d;
            m[16] = float(sum_i8(q[s]));
          }
          q[s] = _mm256_xor_si256(q[s], flip);
        }
        xs[slot + p] = interleave_dwords(q[0], q[1]);
      }
    }
  return {nb, xs, dx, mins};
}

// R rows x the first P token pairs of a tile over blocks [kb0, kb1) (whole super-blocks).
template <class U, int R, int P>
R1PI_INLINE void pair_tile(const uint8_t* const* rows, const PairedX& px, int tile, int64_t kb0,
                           int64_t kb1, __m512 (&acc_io)[R][P], const float* lut, size_t pf) {
  __m512 acc[R][P];
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p) acc[r][p] = acc_io[r][p];
  alignas(32) float d8[R][8];
  const float* dl = &d8[0][0];
  asm("" : "+r"(dl));
  // Pointers that step with the blocks (index arithmetic per block cost a dozen instructions).
  const __m512i* xp = px.xs + (size_t(tile) * px.nb + kb0) * 4;
  const float* dxp = px.dx + (size_t(tile) * px.nb + kb0) * 8;
  const float* mp = U::kMinTerm ? px.mins + (size_t(tile) * (px.nb / 8) + size_t(kb0 / 8)) * 4 * 32 : nullptr;
  const uint8_t* wp[R];
  for (int r = 0; r < R; ++r) wp[r] = rows[r] + kb0 / U::kGroup * U::kGroupBytes;
  for (int64_t b = kb0; b < kb1; b += U::kGroup) {
    typename U::Head h[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) h[r] = U::head(wp[r], lut);
    static_for<U::kGroup>([&]<int k>() {
      typename U::W w[R];
      const __m256 dx = _mm256_load_ps(dxp);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        // Every block's bytes (Q4_0's 18), or every other block's of a super-block (one line).
        if constexpr (k % 2 == 0)
          _mm_prefetch(reinterpret_cast<const char*>(wp[r] + U::kGroupBytes * k / U::kGroup + pf), _MM_HINT_T0);
        w[r] = U::template unpack<k>(h[r], wp[r]);
        _mm256_store_ps(d8[r], U::template factors<k>(h[r], dx));
      }
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        const __m512i x = _mm512_load_si512(xp + p);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m512 f = U::template lanes<k>(w[r], x, h[r]);
          const __m512 d = _mm512_castpd_ps(
              _mm512_broadcastsd_pd(_mm_load_sd(reinterpret_cast<const double*>(dl + 8 * r + 2 * p))));
          acc[r][p] = _mm512_fmadd_ps(d, f, acc[r][p]);
        }
      }
      xp += 4;
      dxp += 8;
    });
    if constexpr (U::kMinTerm) {
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[r][p] = U::min_part(h[r], mp + 32 * p, mp + 32 * p + 16, acc[r][p]);
      mp += 4 * 32;
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) wp[r] += U::kGroupBytes;
  }
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p) acc_io[r][p] = acc[r][p];
}

// Token t0 + 2p + s of a pair tile: lanes 2j + s of its register, in lane order, then reduce8.
R1PI_INLINE float reduce_paired(__m512 v, int s) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m512 split = _mm512_permutexvar_ps(even, v);
  return reduce8(s == 0 ? _mm512_castps512_ps256(split) : _mm512_extractf32x8_ps(split, 1));
}

constexpr int kPairRowGroup = 32;       // rows whose weights stay in cache across the token tiles
constexpr int64_t kPairBlockChunk = 64;  // blocks per pass (32 and 128 were slower, bench/README.md)
constexpr int kPairRows = 2;

// Rows [r0, r1) of token tile `tile` (its first P pairs) over blocks [kb0, kb1), R rows at a time;
// the partial sums wait in accbuf (4 registers per row) between passes.
template <class U, int R, int P>
void pair_rows(const MatmulArgs& a, const PairedX& px, int64_t r0, int64_t r1, int tile, int64_t kb0,
               int64_t kb1, __m512* accbuf, const float* lut) {
  const bool first = kb0 == 0, last = kb1 == px.nb;
  for (int64_t r = r0; r < r1; r += R) {
    __m512 acc[R][P];
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) {
      rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
      for (int p = 0; p < P; ++p) acc[i][p] = first ? _mm512_setzero_ps() : accbuf[(r - r0 + i) * 4 + p];
    }
    // The first token tile streams the weights from memory; later ones find them in cache.
    pair_tile<U, R, P>(rows, px, tile, kb0, kb1, acc, lut, tile == 0 ? size_t(R) * a.w_row_bytes : 0);
    for (int i = 0; i < R; ++i)
      for (int p = 0; p < P; ++p) {
        if (!last) {
          accbuf[(r - r0 + i) * 4 + p] = acc[i][p];
          continue;
        }
        for (int s = 0; s < 2; ++s) {
          const int t = 8 * tile + 2 * p + s;
          if (t < a.B) a.out[int64_t(t) * a.out_stride + r + i] = reduce_paired(acc[i][p], s);
        }
      }
  }
}

template <class U, int P>
void pair_token_tile(const MatmulArgs& a, const PairedX& px, int64_t r0, int64_t r1, int tile,
                     int64_t kb0, int64_t kb1, __m512* accbuf, const float* lut) {
  constexpr int R = kPairRows;
  const int64_t rfull = r0 + (r1 - r0) / R * R;
  if (rfull > r0) pair_rows<U, R, P>(a, px, r0, rfull, tile, kb0, kb1, accbuf, lut);
  if (rfull < r1) pair_rows<U, 1, P>(a, px, rfull, r1, tile, kb0, kb1, accbuf + (rfull - r0) * 4, lut);
}

// One token tile (up to 8 tokens: decode-sized batches, which stream the weights from memory with
// little work per byte): the rows as two long streams, row i of each half of the range in one
// tile, as few_rows does for the same reason, each prefetching kPrefetchAhead bytes along itself.
template <class U, int P>
void pair_streams(const MatmulArgs& a, const PairedX& px, const float* lut) {
  const int64_t q = (a.r1 - a.r0) / 2;
  const int64_t ahead = min64(int64_t(a.w_row_bytes), kPrefetchAhead);
  for (int64_t i = 0; i < q; ++i) {
    const int64_t r[2] = {a.r0 + i, a.r0 + q + i};
    const uint8_t* rows[2] = {a.w + size_t(r[0]) * a.w_row_bytes, a.w + size_t(r[1]) * a.w_row_bytes};
    __m512 acc[2][P] = {};
    pair_tile<U, 2, P>(rows, px, 0, 0, px.nb, acc, lut, size_t(ahead));
    for (int k = 0; k < 2; ++k)
      for (int p = 0; p < P; ++p)
        for (int s = 0; s < 2 && 2 * p + s < a.B; ++s)
          a.out[int64_t(2 * p + s) * a.out_stride + r[k]] = reduce_paired(acc[k][p], s);
  }
  if (a.r0 + 2 * q < a.r1) pair_rows<U, 1, P>(a, px, a.r0 + 2 * q, a.r1, 0, 0, px.nb, nullptr, lut);
}

// Rows [a.r0, a.r1) for 2 tokens or more: one tile as two streams; more tiles in row groups, and
// within a group chunk by chunk of blocks every token tile, so that the group's weights for the
// chunk are read from memory once.
template <class U>
void matmul_pairs(const MatmulArgs& a) {
  if (a.r1 <= a.r0) return;
  const int64_t nb = a.n / QK8_0;
  const float* lut = f16_table();
  const PairedX px = prepare_pairs<U>(a, nb);
  const int tiles = (a.B + 7) / 8, pairs = (a.B + 1) / 2;
  if (tiles == 1) {
    switch (pairs) {
      case 1: pair_streams<U, 1>(a, px, lut); return;
      case 2: pair_streams<U, 2>(a, px, lut); return;
      case 3: pair_streams<U, 3>(a, px, lut); return;
      default: pair_streams<U, 4>(a, px, lut); return;
    }
  }
  static_assert(kPairBlockChunk % 8 == 0, "chunks of whole super-blocks");
  __m512* accbuf = static_cast<__m512*>(tl_acc.get(sizeof(__m512) * 4 * kPairRowGroup * size_t(tiles)));
  for (int64_t rg = a.r0; rg < a.r1; rg += kPairRowGroup) {
    const int64_t rg1 = min64(a.r1, rg + kPairRowGroup);
    for (int64_t kb0 = 0; kb0 < nb; kb0 += kPairBlockChunk) {
      const int64_t kb1 = min64(nb, kb0 + kPairBlockChunk);
      for (int i = 0; i < tiles; ++i) {
        __m512* acc = accbuf + size_t(i) * 4 * kPairRowGroup;
        switch (pairs - 4 * i >= 4 ? 4 : pairs - 4 * i) {
          case 1: pair_token_tile<U, 1>(a, px, rg, rg1, i, kb0, kb1, acc, lut); break;
          case 2: pair_token_tile<U, 2>(a, px, rg, rg1, i, kb0, kb1, acc, lut); break;
          case 3: pair_token_tile<U, 3>(a, px, rg, rg1, i, kb0, kb1, acc, lut); break;
          default: pair_token_tile<U, 4>(a, px, rg, rg1, i, kb0, kb1, acc, lut); break;
        }
      }
    }
  }
}

}  // namespace
}  // namespace r1pi
