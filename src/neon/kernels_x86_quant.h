// The quantised matrix products of the x86 backends, one template over a weight type's policy
// (kernels_x86_policies.h): each backend instantiates it with the policies of its instruction set
// (kernels_avx2.cpp, kernels_avx2_vnni.cpp, kernels_avx512_vnni.cpp). Byte for byte the scalar
// reference's results (recipe in kernels.h); the rules of kernels_x86.h hold here too.
//
// A 32-element block of the weights times a Q8_0 block gives the recipe's eight exact lane sums p_j
// (elements 4j .. 4j+3) in one 256-bit register:
//   maddubs(u8, s8)                   -> 16 pair sums (int16, never saturating here)
//   madd(pairs, 1 or the Q6_K scales) -> 8 sums of four (int32)
// (with VNNI one vpdpbusd, as sdot on the Pi; its sums of four never saturate, so the bytes are the
// same). maddubs wants one unsigned operand, and Q4_0 / Q6_K values are offset (q - 8, q - 32); the
// offset is taken off exactly in integers, on whichever side is cheaper:
//   B <= kFewTokens<P> (4, or 8 with AVX-512 row pairs: decode and verification, memory-bound):
//     weights unsigned (q), activations signed; per call, each block's activation lane (pair) sums
//     give the correction: p_j = sum q*x - 8 * sum x (Q4_0), s * (sum q*x - 32 * sum x) (Q6_K). Rows
//     run as a few long streams, each prefetching its next row (few_rows, few_tile).
//   more tokens (prefill, compute-bound): activations unsigned (x + 128, rearranged once per call
//     so that 8 tokens' blocks sit together), weights signed; each weight block's correction
//     -128 * (its lane sums) is computed once and reused for up to 8 tokens.
// The int32 sums become floats exactly by the "magic number" route: bits(1.5 * 2^23) + p is the
// float 1.5 * 2^23 + p for |p| < 2^22, and subtracting 1.5 * 2^23 gives float(p) exactly; the magic
// is folded into the correction, and the float subtraction runs on port 5 beside the multiplies
// (cvtdq2ps would compete with them). Then acc_j = fma(d_w * d_x, float(p_j), acc_j), one block
// after the other, and reduce8 pairs the lanes as the recipe says. Each output element keeps its
// own accumulator and block order, so the tiling (rows x tokens, and chunks of blocks for large
// batches) never changes a result.
#pragma once

#include "neon/kernels_x86.h"

namespace r1pi {
namespace {

// Per-thread scratch memory, 64-byte aligned, grown on demand.
struct Scratch {
  void* p = nullptr;
  size_t cap = 0;
  ~Scratch() {
    if (p) ::operator delete(p, std::align_val_t(64));
  }
  void* get(size_t n) {
    if (n > cap) {
      if (p) ::operator delete(p, std::align_val_t(64));
      p = nullptr;
      cap = 0;
      const size_t want = (n + n / 4 + 4095) & ~size_t(4095);
      p = ::operator new(want, std::align_val_t(64));
      cap = want;
    }
    return p;
  }
};
thread_local Scratch tl_prep, tl_acc;

constexpr int32_t kMagicBits = 0x4B400000;  // 1.5 * 2^23
constexpr float kMagic = 12582912.0f;

// The activations of one call, rearranged once for all rows. Two layouts:
//   B <= kFewTokens<P> (decode): the quants are read where they are; for block b and token t, at slot
//     b * B + t, corr holds the token-side offsets (Lanes: int32 lanes bits(magic) - offset * (x0 +
//     x1 + x2 + x3), magic and offset from the policy: Q4_0, and Q6_K with VNNI; Pairs: int16
//     pairs 32 * (x0 + x1), Q6_K without VNNI; Q8_0: none) and dx the scale as float.
//   More tokens: for block b and token t (tokens padded to Bp, a multiple of 8) in tiles of 8 tokens,
//     at slot ((t / 8) * nb + b) * 8 + t % 8, so that a tile's blocks follow each other in memory:
//     xq the 32 quants, 32-byte aligned (Q4_0 and Q6_K: x + 128 as unsigned bytes, the weights
//     then enter signed and carry the offset correction); dx the scale as float.
struct Prepared {
  int64_t nb;
  const int8_t* xq;
  const uint8_t* corr;
  const float* dx;
};

// Where block b of token t sits in the layout for more tokens (above).
inline size_t tile_slot(int64_t nb, int64_t b, int t) { return (size_t(t / 8) * nb + b) * 8 + t % 8; }

enum class Corr { None, Lanes, Pairs };

// Up to this many tokens the weights are unpacked once per row for all of them with token-side
// offsets (decode, small batches: memory-bound); more take the weight-side path (compute-bound).
// The policies that run in AVX-512 row pairs (few_tile_pairs) stay ahead on that path up to 8
// tokens; Q8_0, one row per register, does not (bench/README.md). (The avx2 backend's Q4_0 leaves
// this template from 5 tokens on, kernels_avx2_q4_0_batch.h; the avx512-vnni backend's Q4_0 and
// Q8_0, Q6_K, Q4_K and Q5_K from 5: kernels_avx512_batch.h.)
template <class P>
constexpr int kFewTokens = requires { typename P::W2; } ? 8 : 4;

template <class P>
Prepared prepare(const MatmulArgs& a, int64_t nb) {
  const float* lut = f16_table();
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  if (a.B <= kFewTokens<P>) {
    const int Bp = a.B;
    const size_t slots = size_t(nb) * size_t(Bp);
    uint8_t* base = static_cast<uint8_t*>(tl_prep.get(slots * (32 + 4) + 64));
    uint8_t* corr = base;
    float* dx = reinterpret_cast<float*>(base + slots * 32);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
      for (int t = 0; t < a.B; ++t, blk += a.x_row_bytes) {
        const size_t slot = size_t(b) * Bp + t;
        if constexpr (P::kCorr != Corr::None) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
          const __m256i pairs = _mm256_maddubs_epi16(ones8, x);
          __m256i c;
          if constexpr (P::kCorr == Corr::Lanes)
            c = _mm256_sub_epi32(P::magic_bits(),
                                 _mm256_sllv_epi32(_mm256_madd_epi16(pairs, ones16), P::corr_shift()));
          else
            c = _mm256_slli_epi16(pairs, 5);
          _mm256_store_si256(reinterpret_cast<__m256i*>(corr + slot * 32), c);
        }
        dx[slot] = lut[load_u16(blk)];
      }
    }
    return {nb, nullptr, corr, dx};
  }
  const int Bp = (a.B + 7) & ~7;
  const size_t slots = size_t(nb) * size_t(Bp);
  uint8_t* base = static_cast<uint8_t*>(tl_prep.get(slots * (32 + 4) + 64));
  int8_t* xq = reinterpret_cast<int8_t*>(base);
  float* dx = reinterpret_cast<float*>(base + slots * 32);
  const __m256i flip = _mm256_set1_epi8(P::kUnsignedX ? int8_t(0x80) : 0);
  // Block by block, all tokens: each token row's current cache line serves about two blocks.
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
    for (int t = 0; t < a.B; ++t, blk += a.x_row_bytes) {
      const size_t slot = tile_slot(nb, b, t);
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      _mm256_store_si256(reinterpret_cast<__m256i*>(xq + slot * 32), _mm256_xor_si256(x, flip));
      dx[slot] = lut[load_u16(blk)];
    }
    // Padding tokens: scale 0 (their products are computed and dropped).
    for (int t = a.B; t < Bp; ++t) dx[tile_slot(nb, b, t)] = 0.0f;
  }
  return {nb, xq, nullptr, dx};
}

// Token t's activation block bk in decode (B = T <= kFewTokens<P>): its quants, the offsets that
// prepare() made for it (zero where the policy needs none) and its scale.
struct TokenBlock {
  __m256i q, corr;
  float d;
};
template <class P, int T>
R1PI_INLINE TokenBlock token_block(const MatmulArgs& a, const Prepared& pp, int64_t bk, int t) {
  const size_t slot = size_t(bk) * T + t;
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(
              a.x + size_t(t) * a.x_row_bytes + bk * int64_t(sizeof(block_q8_0)) + 2)),
          P::kCorr != Corr::None ? _mm256_load_si256(reinterpret_cast<const __m256i*>(pp.corr + slot * 32))
                                 : _mm256_setzero_si256(),
          pp.dx[slot]};
}

// Calls block.operator()<k, prefetch>(b) for the blocks b + k of a row in order (k: the block
// within a policy's group). Where two blocks still fit in a cache line, the rows prefetch with
// every second block only: decode runs short of instruction slots more than of anything else.
template <class P, class F>
R1PI_INLINE void for_each_block(int64_t nb, F& block) {
  constexpr bool kPairs = 2 * P::kBlockBytes <= 64;
  if constexpr (P::kGroup == 1 && kPairs) {
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      block.template operator()<0, true>(b);
      block.template operator()<0, false>(b + 1);
    }
    if (b < nb) block.template operator()<0, true>(b);
  } else {
    for (int64_t b = 0; b < nb; b += P::kGroup)
      static_for<P::kGroup>([&]<int k>() { block.template operator()<k, k % 2 == 0 || !kPairs>(b); });
  }
}

// The AVX-512 backend's few_tile for policies with row pairs (W2): kernels_avx512_vnni.cpp.
template <class P, int R, int T>
R1PI_INLINE void few_tile_pairs(const uint8_t* const* rows, const MatmulArgs& a, const Prepared& pp,
                                int64_t nb, __m256 (&acc)[R][T], const float* lut, size_t pf);

// Few tokens (B <= kFewTokens<P>): R rows x T tokens over all blocks; each weight block is unpacked
// once for the T tokens, whose activation blocks (with offsets and scales) are loaded once per
// block for the R rows. acc[r][t] lane j = fma(d, float(p_j), acc[r][t]) block after block.
// Decode streams the weights from memory with little work per byte: the out-of-order window alone
// keeps too few cache lines in flight, so each row prefetches `pf` bytes further along its stream
// (see few_rows; prefetch never faults, past the end it is merely wasted).
template <class P, int R, int T>
R1PI_INLINE void few_tile(const uint8_t* const* rows, const MatmulArgs& a, const Prepared& pp,
                          int64_t nb, __m256 (&acc)[R][T], const float* lut, size_t pf) {
  if constexpr (R % 2 == 0 && requires { typename P::W2; }) {
    few_tile_pairs<P, R, T>(rows, a, pp, nb, acc, lut, pf);
    return;
  }
  const __m256 magic = P::magic();
  // Block b + k of every row (k: the block within a policy's group).
  auto block = [&]<int k, bool kPrefetch>(int64_t b) {
    const int64_t bk = b + k;
    __m256i xv[T], corr[T];
    __m256 dxb[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const TokenBlock x = token_block<P, T>(a, pp, bk, t);
      xv[t] = x.q;
      corr[t] = x.corr;
      dxb[t] = _mm256_set1_ps(x.d);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if constexpr (kPrefetch)
        _mm_prefetch(reinterpret_cast<const char*>(rows[r] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
      const typename P::W1 w = P::template unpack1<k>(rows[r], b, lut);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m256 d = _mm256_mul_ps(w.dw, dxb[t]);
        const __m256 f =
            P::scaled(_mm256_sub_ps(_mm256_castsi256_ps(P::lanes1(w, xv[t], corr[t])), magic), w);
        acc[r][t] = _mm256_fmadd_ps(d, f, acc[r][t]);
      }
    }
  };
  for_each_block<P>(nb, block);
}

// Rows [r0, r1), (r1 - r0) a multiple of R, as R streams: the range is cut into R equal parts and
// tile i takes row i of each part. Each stream then reads consecutive rows, one long sequential
// run of memory, which the hardware prefetchers follow far better than R adjacent short rows
// (bench/README.md). Which tile a row is in never changes its result.
// How far ahead each stream prefetches: the rows' own length when shorter. Farther (a whole 8 KB
// w2 row) left the activations less room in L1; 512 B was too close (bench/README.md).
constexpr int64_t kPrefetchAhead = 1024;

template <class P, int R, int T>
void few_rows(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1,
              const float* lut) {
  const int64_t q = (r1 - r0) / R;
  // Each stream prefetches only ahead of itself: start the first lines of every stream now.
  const int64_t ahead = min64(int64_t(a.w_row_bytes), kPrefetchAhead);
  if (r1 - r0 >= R) {
    for (int i = 0; i < R; ++i)
      for (int64_t o = 0; o < ahead; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(a.w + size_t(r0 + i * q) * a.w_row_bytes + o), _MM_HINT_T0);
  }
  for (int64_t r = r0; r < r0 + q; ++r) {
    __m256 acc[R][T];
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) {
      rows[i] = a.w + size_t(r + i * q) * a.w_row_bytes;
      for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
    }
    few_tile<P, R, T>(rows, a, pp, nb, acc, lut, size_t(ahead));
    for (int i = 0; i < R; ++i)
      for (int t = 0; t < T; ++t) a.out[int64_t(t) * a.out_stride + r + i * q] = reduce8(acc[i][t]);
  }
}

// Rows [a.r0, a.r1) for T = a.B tokens: full tiles of R rows, then single rows.
template <class P, int T>
void few_tokens(const MatmulArgs& a, const Prepared& pp, int64_t nb, const float* lut) {
  // With 32 vector registers (AVX-512) the full tile for 3 and 4 tokens too, one pair of rows for
  // 5 to 8 (bench/README.md).
  constexpr int K = P::kRowsSingle;
  constexpr int R = P::Isa::kVectorRegisters == 32 ? (T <= 4 ? K : K / 2)
                                                   : (T <= 2 ? K : (K / 2 > 1 ? K / 2 : 1));
  const int64_t rfull = a.r0 + (a.r1 - a.r0) / R * R;
  few_rows<P, R, T>(a, pp, nb, a.r0, rfull, lut);
  if constexpr (R > 1) few_rows<P, 1, T>(a, pp, nb, rfull, a.r1, lut);
}

// B > 1: R weight rows x T tokens (the token tile from t0, a multiple of 8) over blocks [kb0, kb1).
// Each token's scale is broadcast from d8 by shuffles: stored and reloaded, as before, was slower
// on a Zen 3 core without AVX-512 (bench/README.md).
template <class P, int R, int T>
R1PI_INLINE void multi_tile(const uint8_t* const* rows, const Prepared& pp, int t0, int64_t kb0,
                            int64_t kb1, __m256 (&acc)[R][T], const float* lut, size_t pf) {
  const __m256 magic = _mm256_set1_ps(kMagic);
  for (int64_t b = kb0; b < kb1; b += P::kGroup) {
    static_for<P::kGroup>([&]<int k>() {
      const size_t slot = tile_slot(pp.nb, b + k, t0);
      const int8_t* xq = pp.xq + slot * 32;
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[r] + pf + (b + k) * P::kBlockBytes), _MM_HINT_T0);
        const typename P::WN w = P::template unpackN<k>(rows[r], b, lut);
        // The T scales d = d_w * d_x at once, then each token's broadcast within registers.
        const __m256 d8 = _mm256_mul_ps(w.dw, _mm256_load_ps(pp.dx + slot));
        const __m256 dlo = _mm256_permute2f128_ps(d8, d8, 0x00), dhi = _mm256_permute2f128_ps(d8, d8, 0x11);
        static_for<T>([&]<int t>() {
          const __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(P::lanesN(w, xq + 32 * t)), magic);
          const __m256 d = _mm256_shuffle_ps(t < 4 ? dlo : dhi, t < 4 ? dlo : dhi, (t % 4) * 0x55);
          acc[r][t] = _mm256_fmadd_ps(d, f, acc[r][t]);
        });
      }
    });
  }
}

// Rows per tile for T tokens: about 8 accumulators (fma chains) in flight, 16 registers in all.
constexpr int rows_for(int T) { return T <= 2 ? 4 : T <= 4 ? 2 : 1; }
constexpr int kRowGroup = 32;        // rows whose weights stay in cache across the token tiles
constexpr int64_t kBlockChunk = 64;  // blocks per pass when the tokens need several tiles

template <class P, int R, int T>
void multi_rows(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1, int t0,
                int64_t chunk, __m256* accbuf, const float* lut) {
  for (int64_t kb0 = 0; kb0 < nb; kb0 += chunk) {
    const int64_t kb1 = min64(nb, kb0 + chunk);
    const bool first = kb0 == 0, last = kb1 == nb;
    for (int64_t r = r0; r < r1; r += R) {
      __m256 acc[R][T];
      const uint8_t* rows[R];
      for (int i = 0; i < R; ++i) {
        rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
        for (int t = 0; t < T; ++t)
          acc[i][t] = first ? _mm256_setzero_ps() : accbuf[(r - r0 + i) * 8 + t];
      }
      // The first token tile streams the weights from memory: prefetch as for B = 1. Later tiles
      // find them in L2 (pf = 0 prefetches what is being read: a no-op).
      multi_tile<P, R, T>(rows, pp, t0, kb0, kb1, acc, lut, t0 == 0 ? size_t(R) * a.w_row_bytes : 0);
      for (int i = 0; i < R; ++i)
        for (int t = 0; t < T; ++t) {
          if (last) a.out[int64_t(t0 + t) * a.out_stride + r + i] = reduce8(acc[i][t]);
          else accbuf[(r - r0 + i) * 8 + t] = acc[i][t];
        }
    }
  }
}

// Rows [r0, r1) of one token tile: full tiles of R rows, then single rows.
template <class P, int R, int T>
void multi_token_tile(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1,
                      int t0, int64_t chunk, __m256* accbuf, const float* lut) {
  const int64_t rfull = r0 + (r1 - r0) / R * R;
  if (rfull > r0) multi_rows<P, R, T>(a, pp, nb, r0, rfull, t0, chunk, accbuf, lut);
  if (R > 1 && rfull < r1)
    multi_rows<P, 1, T>(a, pp, nb, rfull, r1, t0, chunk, accbuf + (rfull - r0) * 8, lut);
}

template <class P>
void matmul_quant(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  const int64_t nb = a.n / QK8_0;
  const float* lut = f16_table();
  const Prepared pp = prepare<P>(a, nb);
  switch (a.B) {
    case 1: few_tokens<P, 1>(a, pp, nb, lut); return;
    case 2: few_tokens<P, 2>(a, pp, nb, lut); return;
    case 3: few_tokens<P, 3>(a, pp, nb, lut); return;
    case 4: few_tokens<P, 4>(a, pp, nb, lut); return;
    default: break;
  }
  if constexpr (kFewTokens<P> == 8) {
    switch (a.B) {
      case 5: few_tokens<P, 5>(a, pp, nb, lut); return;
      case 6: few_tokens<P, 6>(a, pp, nb, lut); return;
      case 7: few_tokens<P, 7>(a, pp, nb, lut); return;
      case 8: few_tokens<P, 8>(a, pp, nb, lut); return;
      default: break;
    }
  }
  // Several token tiles: each pass over a chunk of blocks keeps that chunk's activations (8 tokens)
  // in L1 while the row group's weights come from L2.
  const int64_t chunk = a.B > 8 ? (kBlockChunk + P::kGroup - 1) / P::kGroup * P::kGroup : nb;
  __m256* accbuf = static_cast<__m256*>(tl_acc.get(sizeof(__m256) * 8 * kRowGroup));
  for (int64_t rg = a.r0; rg < a.r1; rg += kRowGroup) {
    const int64_t rg1 = min64(a.r1, rg + kRowGroup);
    for (int t0 = 0; t0 < a.B; t0 += 8) {
      switch (a.B - t0 >= 8 ? 8 : a.B - t0) {
        case 1: multi_token_tile<P, rows_for(1), 1>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 2: multi_token_tile<P, rows_for(2), 2>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 3: multi_token_tile<P, rows_for(3), 3>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 4: multi_token_tile<P, rows_for(4), 4>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 5: multi_token_tile<P, rows_for(5), 5>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 6: multi_token_tile<P, rows_for(6), 6>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 7: multi_token_tile<P, rows_for(7), 7>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        default: multi_token_tile<P, rows_for(8), 8>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
      }
    }
  }
}

// One row times one token through the matrix product (the same arithmetic by construction).
template <void (*Matmul)(const MatmulArgs&)>
float dot_via_matmul(int64_t n, const void* w, const void* x) {
  float out = 0.0f;
  const MatmulArgs a{n, static_cast<const uint8_t*>(w), 0, 0, 1, static_cast<const uint8_t*>(x),
                     0, 1, &out, 0};
  Matmul(a);
  return out;
}

// A quantised type's entries: its matrix product, and vec_dot as the product of one row and token.
template <class P>
constexpr TypeKernels quant_entries() {
  return {.vec_dot = dot_via_matmul<matmul_quant<P>>, .matmul = matmul_quant<P>};
}

}  // namespace
}  // namespace r1pi
