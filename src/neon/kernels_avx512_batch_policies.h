// The block unpackers of the avx512-vnni batch products (kernels_avx512_batch.h, which says what
// an unpacker gives): Q4_0, Q8_0, Q6_K, Q4_K and Q5_K. Each makes a weight block's 32 values once
// per row for the tile's token pairs, each dword twice (dwords 2j and 2j + 1 hold lane j's four
// values, for the pair's two tokens), and turns vpdpbusd's sums into the recipe's float(p_j)
// exactly (kernels.h). Included by kernels_avx512_vnni.cpp after its Isa (Avx512).
#pragma once

#include "neon/kernels_x86_policies.h"

namespace r1pi {
namespace {

// Each dword of v twice, in order: lane j's four values for both tokens of a pair.
R1PI_INLINE __m512i dup_dwords(__m256i v) {
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                                  _mm512_zextsi256_si512(v));
}

// Signed weights w against activations x + 128: vpdpbusd(magic, x + 128, w) is bits(M + sum
// (x + 128) w), and base = M + 128 * (the lane's sum of w) is what to take off for p_j.
R1PI_INLINE __m512 offset_base(__m512i magic_bits, __m512i w) {
  return _mm512_castsi512_ps(_mm512_dpbusd_epi32(magic_bits, _mm512_set1_epi8(int8_t(0x80)), w));
}
R1PI_INLINE __m512 offset_lanes(__m512i magic_bits, __m512i x, __m512i w, __m512 base) {
  return _mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(magic_bits, x, w)), base);
}

// Types whose block is an fp16 d and 32 signed weights: the block's d is the head.
struct BlockHead {
  __m256 dw;
};
struct SignedW {
  __m512i w;
  __m512 base;
};

// Q4_0: lanes 0..3 the low nibbles as q - 8, lanes 4..7 the high nibbles left in place as 16 q -
// 128 (= 16 (q - 8)), measured against M16 (whose ulp is 1/16): one vpshufb spreads the 16 bytes,
// one AND and one subtraction make the values.
struct Q4_0Batch {
  static constexpr int kGroup = 1;
  static constexpr int64_t kGroupBytes = sizeof(block_q4_0);
  static constexpr bool kUnsignedX = true, kMinTerm = false;
  using Head = BlockHead;
  using W = SignedW;
  static R1PI_INLINE __m512i magic_bits() {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(kMagicBits)),
                              _mm256_set1_epi32(kMagic16Bits), 1);
  }
  static R1PI_INLINE Head head(const uint8_t* blk, const float* lut) {
    return {_mm256_broadcast_ss(lut + load_u16(blk))};
  }
  template <int k>
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(h.dw, dx); }
  template <int k>
  static R1PI_INLINE W unpack(const Head&, const uint8_t* blk) {
    const __m512i raw = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    const __m512i pick = _mm512_setr_epi32(0x03020100, 0x03020100, 0x07060504, 0x07060504, 0x0B0A0908,
                                           0x0B0A0908, 0x0F0E0D0C, 0x0F0E0D0C, 0x03020100, 0x03020100,
                                           0x07060504, 0x07060504, 0x0B0A0908, 0x0B0A0908, 0x0F0E0D0C,
                                           0x0F0E0D0C);
    const __m512i low = _mm512_castsi256_si512(_mm256_set1_epi8(0x0F));
    const __m512i mask = _mm512_inserti64x4(low, _mm256_set1_epi8(int8_t(0xF0)), 1);
    const __m512i offs = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi8(8)),
                                            _mm256_set1_epi8(int8_t(0x80)), 1);
    const __m512i w = _mm512_sub_epi8(_mm512_and_si512(_mm512_shuffle_epi8(raw, pick), mask), offs);
    return {w, offset_base(magic_bits(), w)};
  }
  // bits(M) + sum (x + 128) w is the float M + sum (x + 128) w (its distance from M stays below
  // 2^17); less M + 128 sum w it leaves p_j exactly (M16 and p_j / 16 in lanes 4..7).
  template <int k>
  static R1PI_INLINE __m512 lanes(const W& w, __m512i x, const Head&) {
    return offset_lanes(magic_bits(), x, w.w, w.base);
  }
};

// Q8_0: the 32 weights as they are (|(x + 128) w| <= 255 * 128, a lane's sum below 2^17).
struct Q8_0Batch : Q4_0Batch {
  static constexpr int64_t kGroupBytes = sizeof(block_q8_0);
  static R1PI_INLINE __m512i magic_bits() { return _mm512_set1_epi32(kMagicBits); }
  template <int k>
  static R1PI_INLINE W unpack(const Head&, const uint8_t* blk) {
    const __m512i w = dup_dwords(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2)));
    return {w, offset_base(magic_bits(), w)};
  }
  template <int k>
  static R1PI_INLINE __m512 lanes(const W& w, __m512i x, const Head&) {
    return offset_lanes(magic_bits(), x, w.w, w.base);
  }
};

// Q6_K: block k's q - 32 (Q6_KBase::quants), the super-block's d, and the lane's 16-element
// sub-block scale as a float multiply after the exact conversion, as Q6_KVnni: t = the sum of four
// (q - 32) x, and s * t, |s * t| < 2^21, is exact.
template <class I>
struct Q6_KBatch {
  static constexpr int kGroup = 8;
  static constexpr int64_t kGroupBytes = sizeof(block_q6_K);
  static constexpr bool kUnsignedX = true, kMinTerm = false;
  struct Head {
    __m256 dw;
    __m512 sc;  // the 16 scales as floats
  };
  struct W {
    __m512i w;
    __m512 base, sf;
  };
  static R1PI_INLINE __m512i magic_bits() { return _mm512_set1_epi32(kMagicBits); }
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(g);
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    return {_mm256_broadcast_ss(lut + sb->d), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc))};
  }
  template <int k>
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(h.dw, dx); }
  // Lanes 0..3 (dwords 0..7) take scales[2k], lanes 4..7 scales[2k + 1].
  template <int k>
  static R1PI_INLINE W unpack(const Head& h, const uint8_t* g) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(g);
    const __m256i q = _mm256_sub_epi8(Q6_KBase<I>::template quants<k>(sb), _mm256_set1_epi8(32));
    const __m512i w = dup_dwords(q);
    constexpr int s = 2 * k;
    const __m512 sf = _mm512_permutexvar_ps(
        _mm512_setr_epi32(s, s, s, s, s, s, s, s, s + 1, s + 1, s + 1, s + 1, s + 1, s + 1, s + 1, s + 1), h.sc);
    return {w, offset_base(magic_bits(), w), sf};
  }
  template <int k>
  static R1PI_INLINE __m512 lanes(const W& w, __m512i x, const Head&) {
    return _mm512_mul_ps(offset_lanes(magic_bits(), x, w.w, w.base), w.sf);
  }
};

// Q4_K and Q5_K (K: their kernels_x86_policies.h policy, for the head and the quants): unsigned
// quants against the activations as they are (|q x| <= 31 * 127, no offset); d_b = (d * x.d) *
// scale_k, and after the eight blocks the min part, lane s (dwords 2s, 2s + 1) taking block s's:
// fma(-(dmin * x_s.d), min_s * sum(x_s), acc), the product of integers exact.
template <class K>
struct K4Batch {
  static constexpr int kGroup = 8;
  static constexpr int64_t kGroupBytes = sizeof(typename K::Block);
  static constexpr bool kUnsignedX = false, kMinTerm = true;
  using Head = typename K::Head;
  using W = __m512i;
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut) { return K::head(g, lut, 8); }
  template <int k>
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) {
    return _mm256_mul_ps(_mm256_mul_ps(h.dw, dx), _mm256_permutevar8x32_ps(h.scales, _mm256_set1_epi32(k)));
  }
  template <int k>
  static R1PI_INLINE W unpack(const Head&, const uint8_t* g) {
    return dup_dwords(K::template quants<k>(reinterpret_cast<const typename K::Block*>(g)));
  }
  template <int k>
  static R1PI_INLINE __m512 lanes(const W& w, __m512i x, const Head&) {
    return _mm512_sub_ps(_mm512_castsi512_ps(_mm512_dpbusd_epi32(_mm512_set1_epi32(kMagicBits), w, x)),
                         _mm512_set1_ps(kMagic));
  }
  static R1PI_INLINE __m512 min_part(const Head& h, const float* dxs, const float* sums, __m512 acc) {
    const __m512 dmin = _mm512_broadcastss_ps(_mm256_castps256_ps128(h.dmin));
    const __m512 mins = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), _mm512_zextps256_ps512(h.mins));
    return _mm512_fnmadd_ps(_mm512_mul_ps(dmin, _mm512_loadu_ps(dxs)), _mm512_mul_ps(mins, _mm512_loadu_ps(sums)), acc);
  }
};

}  // namespace
}  // namespace r1pi
