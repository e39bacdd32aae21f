// The policies of matmul_min (kernels_x86_min_term.h, which says what a policy gives) for the types
// beside Q4_K and Q5_K whose blocks take their factors from a group of eight: Q4_1 and Q5_1 (eight
// consecutive blocks, a min part), IQ4_XS (a scale per block in its factor), Q2_K and Q3_K (the
// 16-element sub-blocks' scales in the lanes' integer sums, as Q6_K; Q2_K with a min part). One
// template over the backend's Isa each; the same bytes as the scalar reference (recipe in kernels.h).
#pragma once

#include "neon/kernels_x86_policies.h"

namespace r1pi {
namespace {

// float(the lane sums of four u * s), u unsigned: exact (|sum| < 2^24).
template <class I>
R1PI_INLINE __m256 lane_sums(__m256i u, __m256i s) {
  return _mm256_cvtepi32_ps(I::dot4_add(_mm256_setzero_si256(), u, s));
}

// Block k's two 16-element sub-blocks' scales as int16 pairs, from the group's 16 scale bytes:
// sc[2k] for lanes 0..3, sc[2k + 1] for lanes 4..7 (madd multiplies the pair sums by them).
template <int k>
R1PI_INLINE __m256i sixteens_scales(__m128i sc) {
  const __m128i pick = _mm_setr_epi8(2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k + 1,
                                     2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1,
                                     2 * k + 1);
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, pick));
}

// Q4_1 and Q5_1 (x = d * q + m, q unsigned): the group is eight consecutive blocks, d_b = d * x.d,
// and lane s takes block s's min part (m * x.d) * (the sum of x's quants). The eight blocks' d and
// m (their first four bytes) come by one gather and become floats by F16C (the same as
// fp16_to_fp32, ggml/fp16.h); a row's last group may hold fewer blocks, whose lanes the gather and
// the min part leave alone.
template <class I, class Q>
struct Min32Policy : GroupPolicy<I, 8 * Q::kBlockBytes, XSums::Block, true> {
  struct Head {
    __m256 dw, m;
  };
  static R1PI_INLINE Head head(const uint8_t* g, const float*, int count) {
    constexpr int32_t B = int32_t(Q::kBlockBytes);
    const __m256i at = _mm256_setr_epi32(0, B, 2 * B, 3 * B, 4 * B, 5 * B, 6 * B, 7 * B);
    const int* base = reinterpret_cast<const int*>(g);
    const __m256i dm = count == 8 ? _mm256_i32gather_epi32(base, at, 1)
                                  : _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), base, at, lane_mask(count), 1);
    // The eight d in the low half, the eight m in the high half, widened as fp16_to_fp32 does.
    const __m256i split = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(dm, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5,
                                                 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)),
        0xD8);
    return {_mm256_cvtph_ps(_mm256_castsi256_si128(split)), _mm256_cvtph_ps(_mm256_extracti128_si256(split, 1))};
  }
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(h.dw, dx); }
  template <int k>
  static R1PI_INLINE __m256i unpack(const Head&, const uint8_t* g) {
    return Q::quants(g + k * Q::kBlockBytes);
  }
  static R1PI_INLINE __m256 lanes(__m256i q, __m256i x) { return lane_sums<I>(q, x); }
  static R1PI_INLINE __m256 min_part(const Head& h, __m256 dx, __m256 s0, __m256, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_mul_ps(h.m, dx), s0, acc);
  }
  // AVX-512 (whole groups): blocks k and k + 1 at once.
  static constexpr bool kBlockPairs = true;
  using TokenPair = __m512i;
  static R1PI_INLINE __m512i token2(__m512i x) { return x; }
  template <int k>
  static R1PI_INLINE __m512i unpack2(const Head&, const uint8_t* g) {
    return Q::quants2(g + k * Q::kBlockBytes);
  }
  static R1PI_INLINE __m512 lanes2(__m512i q, __m512i x) {
    return _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, x));
  }
};

// Two consecutive blocks' nibbles (qs at p and at p + B), each half as q4_nibbles makes it.
template <int64_t B>
R1PI_INLINE __m512i q4_nibbles2(const uint8_t* p) {
  const __m512i raw = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))),
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + B))), 1);
  const __m512i by = _mm512_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4);
  return _mm512_and_si512(_mm512_srlv_epi32(raw, by), _mm512_set1_epi8(0x0F));
}

struct Q4_1Quants {
  static constexpr int64_t kBlockBytes = sizeof(block_q4_1);
  static R1PI_INLINE __m256i quants(const uint8_t* blk) { return q4_nibbles(blk + 4); }
  static R1PI_INLINE __m512i quants2(const uint8_t* blk) { return q4_nibbles2<kBlockBytes>(blk + 4); }
};
// Q5_1's fifth bits for two blocks: each block's qh spread as in q5_quants, tested into a mask.
struct Q5_1Quants {
  static constexpr int64_t kBlockBytes = sizeof(block_q5_1);
  static R1PI_INLINE __m256i quants(const uint8_t* blk) { return q5_quants(blk + 4, blk + 8); }
  static R1PI_INLINE __m512i quants2(const uint8_t* blk) {
    const __m512i qh = _mm512_inserti64x4(_mm512_set1_epi32(int32_t(load_u32(blk + 4))),
                                          _mm256_set1_epi32(int32_t(load_u32(blk + kBlockBytes + 4))), 1);
    const __m512i spread = _mm512_shuffle_epi8(
        qh, _mm512_broadcast_i64x4(_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2,
                                                    2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)));
    const __mmask64 high = _mm512_test_epi8_mask(spread, _mm512_set1_epi64(int64_t(0x8040201008040201ull)));
    return _mm512_or_si512(q4_nibbles2<kBlockBytes>(blk + 8), _mm512_maskz_mov_epi8(high, _mm512_set1_epi8(0x10)));
  }
};

template <class I>
using Q4_1Policy = Min32Policy<I, Q4_1Quants>;
template <class I>
using Q5_1Policy = Min32Policy<I, Q5_1Quants>;

// IQ4_XS: block k's levels as IQ4_NL's (nibbles of qs[16k ..]), d_b = (d * x.d) * (scale_k - 32)
// as Q4_K's factors, no min part. The levels are signed (|w| <= 127): |w| times x with w's sign,
// as SignedBlockPolicy.
template <class I>
struct Iq4XsPolicy : GroupPolicy<I, sizeof(block_iq4_xs), XSums::None> {
  struct Head {
    __m256 dw, scales;  // scales: scale_k - 32 in lane k
  };
  struct W {
    __m256i aw, w;
  };
  // Lane k: the low four bits from nibble k of scales_l, the high two from bits 2k of scales_h.
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut, int) {
    const block_iq4_xs* sb = reinterpret_cast<const block_iq4_xs*>(g);
    const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int32_t(load_u32(sb->scales_l))),
                                                          _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                        _mm256_set1_epi32(0xF));
    const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(sb->scales_h),
                                                          _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                                        _mm256_set1_epi32(3));
    const __m256i code = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4));
    return {_mm256_broadcast_ss(lut + sb->d), _mm256_cvtepi32_ps(_mm256_sub_epi32(code, _mm256_set1_epi32(32)))};
  }
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(_mm256_mul_ps(h.dw, dx), h.scales); }
  template <int k>
  static R1PI_INLINE W unpack(const Head&, const uint8_t* g) {
    const __m256i w = iq4_levels(reinterpret_cast<const block_iq4_xs*>(g)->qs + 16 * k);
    return {_mm256_abs_epi8(w), w};
  }
  static R1PI_INLINE __m256 lanes(const W& w, __m256i x) { return lane_sums<I>(w.aw, _mm256_sign_epi8(x, w.w)); }
  // AVX-512: blocks k and k + 1 at once, the levels offset by 128 (unsigned) and 128 times each
  // lane's sum of x taken off by the sums' start (token2, once per token and pair).
  static constexpr bool kBlockPairs = true;
  struct TokenPair {
    __m512i x, start;  // start: -128 * (x0 + x1 + x2 + x3) per lane
  };
  static R1PI_INLINE TokenPair token2(__m512i x) {
    const __m512i zero = _mm512_setzero_si512();
    return {x, _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, _mm512_set1_epi8(int8_t(0x80)), x))};
  }
  template <int k>
  static R1PI_INLINE __m512i unpack2(const Head&, const uint8_t* g) {
    const __m128i levels = _mm_add_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)),
                                        _mm_set1_epi8(int8_t(0x80)));
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(levels),
                               q4_nibbles2<16>(reinterpret_cast<const block_iq4_xs*>(g)->qs + 16 * k));
  }
  static R1PI_INLINE __m512 lanes2(__m512i u, const TokenPair& x) {
    return _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(x.start, u, x.x));
  }
};

// Q2_K and Q3_K: block k (0..7) of a super-block is its half h = k / 4 and bit pair j = k % 4
// (q23_K_layout.h): two low bits (qs[32h + l] >> 2j) & 3. d_b = d * x.d; the lanes are the pair
// sums of q * x.q times their sub-block's scale (madd), exact.
template <int k>
R1PI_INLINE __m256i two_bits(const uint8_t* qs) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (k / 4)));
  return _mm256_and_si256(_mm256_srli_epi16(raw, 2 * (k % 4)), _mm256_set1_epi8(3));
}

// AVX-512 (kBlockPairs): blocks k and k + 1 (k even) in one 512-bit register, lanes 0..7 and
// 8..15: their two bits, and their four sub-blocks' scales as int16 (sc[2k] .. sc[2k + 3], eight
// each).
template <int k>
R1PI_INLINE __m512i two_bits2(const uint8_t* qs) {
  const __m512i raw = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (k / 4))));
  constexpr short j = 2 * (k % 4);
  const __m512i by = _mm512_inserti64x4(_mm512_set1_epi16(j), _mm256_set1_epi16(j + 2), 1);
  return _mm512_and_si512(_mm512_srlv_epi16(raw, by), _mm512_set1_epi8(3));
}

template <int k>
R1PI_INLINE __m512i sixteens_scales2(__m128i sc) {
  const __m512i first = _mm512_setr_epi32(0, 0, 0, 0, 0x10001, 0x10001, 0x10001, 0x10001, 0x20002, 0x20002,
                                          0x20002, 0x20002, 0x30003, 0x30003, 0x30003, 0x30003);
  return _mm512_permutexvar_epi16(_mm512_add_epi16(first, _mm512_set1_epi16(2 * k)),
                                  _mm512_castsi256_si512(_mm256_cvtepi8_epi16(sc)));
}

// Q2_K: scales[s] & 15 the scale, scales[s] >> 4 the min of sub-block s; lane k takes block k's min
// part -(dmin * x.d) * (min_2k * the sum of its first 16 quants + min_2k+1 * its last 16's).
// Pair sums of q * x.q (q <= 3) fit int16.
template <class I>
struct Q2_KPolicy : GroupPolicy<I, sizeof(block_q2_K), XSums::Halves> {
  struct Head {
    __m128i sc;  // the 16 scales
    __m256 dw, dmin, mlo, mhi;
  };
  struct W {
    __m256i q, s;
  };
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut, int) {
    const block_q2_K* sb = reinterpret_cast<const block_q2_K*>(g);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    const __m128i m0F = _mm_set1_epi8(0x0F);
    // The mins of the even sub-blocks, then of the odd ones.
    const __m128i mins = _mm_shuffle_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), m0F),
                                          _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    return {_mm_and_si128(raw, m0F), _mm256_broadcast_ss(lut + sb->d), _mm256_broadcast_ss(lut + sb->dmin),
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(mins)),
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(mins, 8)))};
  }
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(h.dw, dx); }
  template <int k>
  static R1PI_INLINE W unpack(const Head& h, const uint8_t* g) {
    return {two_bits<k>(reinterpret_cast<const block_q2_K*>(g)->qs), sixteens_scales<k>(h.sc)};
  }
  static R1PI_INLINE __m256 lanes(const W& w, __m256i x) {
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(w.q, x), w.s));
  }
  static constexpr bool kBlockPairs = true;
  struct W2 {
    __m512i q, s;
  };
  using TokenPair = __m512i;
  static R1PI_INLINE __m512i token2(__m512i x) { return x; }
  template <int k>
  static R1PI_INLINE W2 unpack2(const Head& h, const uint8_t* g) {
    return {two_bits2<k>(reinterpret_cast<const block_q2_K*>(g)->qs), sixteens_scales2<k>(h.sc)};
  }
  static R1PI_INLINE __m512 lanes2(const W2& w, __m512i x) {
    return _mm512_cvtepi32_ps(_mm512_madd_epi16(_mm512_maddubs_epi16(w.q, x), w.s));
  }
  static R1PI_INLINE __m256 min_part(const Head& h, __m256 dx, __m256 s0, __m256 s1, __m256 acc) {
    const __m256 m = _mm256_add_ps(_mm256_mul_ps(h.mlo, s0), _mm256_mul_ps(h.mhi, s1));
    return _mm256_fnmadd_ps(_mm256_mul_ps(h.dmin, dx), m, acc);
  }
};

// Q3_K: q = the two low bits, less 4 where bit 4h + j of hmask[l] is clear (-4..3); the scale of
// sub-block s its 6-bit code - 32 (q23_K_layout.h), decoded for the 16 at once. The weights enter
// unsigned, u = q + 4 (the two low bits and the high bit as 4), and each pair sum takes 4 (x0 + x1)
// off (token(): once per token and block, for all rows): (u0 - 4) x0 + (u1 - 4) x1, within
// 2 * 4 * 127, then madd by the scales.
template <class I>
struct Q3_KPolicy : GroupPolicy<I, sizeof(block_q3_K), XSums::None> {
  struct Head {
    __m128i sc;  // the 16 scales - 32, int8
    __m256 dw;
  };
  struct W {
    __m256i u, s;
  };
  struct TokenBlock {
    __m256i x, pairs4;  // the quants; 4 (x0 + x1) per pair
  };
  static R1PI_INLINE TokenBlock token(__m256i x) { return {x, _mm256_maddubs_epi16(_mm256_set1_epi8(4), x)}; }
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut, int) {
    const block_q3_K* sb = reinterpret_cast<const block_q3_K*>(g);
    // scales[0..11] in bytes 0..11 (the 16 bytes end with d, inside the block).
    const __m128i raw = _mm_srli_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales - 2)), 2);
    const __m128i m0F = _mm_set1_epi8(0x0F);
    // Codes 0..7 the low nibbles of scales[0..7], codes 8..15 their high nibbles.
    const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(raw, m0F), _mm_and_si128(_mm_srli_epi16(raw, 4), m0F));
    // Code s's high two bits: bits 2 (s / 4) of scales[8 + s % 4] (each dword shifted by its own 2 (s / 4)).
    const __m128i top = _mm_shuffle_epi8(raw, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(top, _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3));
    const __m128i code = _mm_or_si128(low, _mm_slli_epi16(high, 4));
    return {_mm_sub_epi8(code, _mm_set1_epi8(32)), _mm256_broadcast_ss(lut + sb->d)};
  }
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(h.dw, dx); }
  // The high bit, bit 4h + j of each byte of hmask, moved to bit 2 (a 16-bit shift: the mask keeps
  // only bits that stayed within their byte).
  template <int k>
  static R1PI_INLINE W unpack(const Head& h, const uint8_t* g) {
    const block_q3_K* sb = reinterpret_cast<const block_q3_K*>(g);
    constexpr int bit = 4 * (k / 4) + k % 4;
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->hmask));
    const __m256i at2 = bit >= 2 ? _mm256_srli_epi16(hm, bit - 2) : _mm256_slli_epi16(hm, 2 - bit);
    return {_mm256_or_si256(two_bits<k>(sb->qs), _mm256_and_si256(at2, _mm256_set1_epi8(4))), sixteens_scales<k>(h.sc)};
  }
  static R1PI_INLINE __m256 lanes(const W& w, const TokenBlock& x) {
    const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(w.u, x.x), x.pairs4);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, w.s));
  }
  static constexpr bool kBlockPairs = true;
  struct W2 {
    __m512i u, s;
  };
  struct TokenPair {
    __m512i x, pairs4;
  };
  static R1PI_INLINE TokenPair token2(__m512i x) { return {x, _mm512_maddubs_epi16(_mm512_set1_epi8(4), x)}; }
  // Block k's high bit is bit 4h + j of hmask's bytes, block k + 1's the next.
  template <int k>
  static R1PI_INLINE W2 unpack2(const Head& h, const uint8_t* g) {
    const block_q3_K* sb = reinterpret_cast<const block_q3_K*>(g);
    constexpr short bit = 4 * (k / 4) + k % 4;
    const __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->hmask)));
    __m512i at2;
    if constexpr (bit >= 2)
      at2 = _mm512_srlv_epi16(hm, _mm512_inserti64x4(_mm512_set1_epi16(bit - 2), _mm256_set1_epi16(bit - 1), 1));
    else
      at2 = _mm512_sllv_epi16(hm, _mm512_inserti64x4(_mm512_set1_epi16(2 - bit), _mm256_set1_epi16(1 - bit), 1));
    return {_mm512_or_si512(two_bits2<k>(sb->qs), _mm512_and_si512(at2, _mm512_set1_epi8(4))), sixteens_scales2<k>(h.sc)};
  }
  static R1PI_INLINE __m512 lanes2(const W2& w, const TokenPair& x) {
    const __m512i pairs = _mm512_sub_epi16(_mm512_maddubs_epi16(w.u, x.x), x.pairs4);
    return _mm512_cvtepi32_ps(_mm512_madd_epi16(pairs, w.s));
  }
};

}  // namespace
}  // namespace r1pi
