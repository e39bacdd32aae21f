// The weight types' policies for the x86 quantised products (kernels_x86_quant.h), one per
// instruction set where the unpacking differs: Q4_0Avx2 / Q4_0Vnni, Q6_KAvx2 / Q6_KVnni, and
// Q8_0, Q5_0, IQ4_NL and MXFP4 (SignedBlockPolicy), Q4_K and Q5_K (kernels_x86_min_term.h; its other
// types' policies are in kernels_x86_super_block_policies.h) for all. Each is a template over the
// backend's Isa, which gives
//   dot4_add(acc, u, s): acc + the sums of four u8 x s8 products per int32 lane (without VNNI,
//     maddubs forms pair sums in int16, saturating: callers keep them in range, and madd adds the
//     pairs; vpdpbusd sums in int32), and
//   kVectorRegisters: 16, or 32 with AVX-512.
// The AVX-512 row-pair policies build on the VNNI ones (kernels_avx512_vnni.cpp).
//
// Each policy unpacks one weight block twice over:
//   unpack1/lanes1 (B <= kFewTokens<P>): weights unsigned, the token-side offsets from Prepared::corr;
//   unpackN/lanesN (more tokens): weights signed, activations x + 128, the offset correction
//     bits(1.5 * 2^23) - 128 * (the lane's weight sum) computed once per block for all tokens.
// lanes* return bits(1.5 * 2^23 + p_j) in each lane.
#pragma once

#include "neon/kernels_x86_min_term.h"
#include "neon/kernels_x86_quant.h"

namespace r1pi {
namespace {

// 1.5 * 2^19, whose ulp is 1/16: bits(1.5 * 2^19) + 16 p is the float 1.5 * 2^19 + p (|16 p| < 2^22).
constexpr int32_t kMagic16Bits = 0x49400000;
constexpr float kMagic16 = 786432.0f;

// Q4_0 nibbles of one block in element order: both register halves get the 16 bytes, the upper
// half shifted by 4 (the 32-bit shift drags the next byte's low bits into each high nibble, which
// the mask removes).
inline __m256i q4_nibbles(const uint8_t* qs) {
  const __m256i raw = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  return _mm256_and_si256(_mm256_srlv_epi32(raw, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                          _mm256_set1_epi8(0x0F));
}

// What both Q4_0 policies share: the layout and the weight-side path.
template <class I>
struct Q4_0Base {
  using Isa = I;
  static constexpr int kGroup = 1;
  static constexpr int64_t kBlockBytes = sizeof(block_q4_0);
  static constexpr int kRowsSingle = 4;
  static constexpr Corr kCorr = Corr::Lanes;
  static constexpr bool kUnsignedX = true;
  struct W1 {
    __m256i q;   // 0..15 (Q4_0Vnni: lanes 4..7 16 q)
    __m256 dw;
  };
  struct WN {
    __m256i w;     // q - 8
    __m256i corr;  // bits(magic) - 128 * lane sums of w
    __m256 dw;
  };
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    return Isa::dot4_add(corr, w.q, x);
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
  // |(x + 128) (q - 8)| <= 255 * 8 per product: pair sums fit int16.
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    const __m256i w = _mm256_sub_epi8(q4_nibbles(blk + 2), _mm256_set1_epi8(8));
    const __m256i s = Isa::dot4_add(_mm256_setzero_si256(), _mm256_set1_epi8(int8_t(0x80)), w);
    return {w, _mm256_sub_epi32(_mm256_set1_epi32(kMagicBits), s), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    return Isa::dot4_add(w.corr, _mm256_load_si256(reinterpret_cast<const __m256i*>(xq)), w.w);
  }
};

template <class I>
struct Q4_0Avx2 : Q4_0Base<I> {
  using W1 = typename Q4_0Base<I>::W1;
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  static R1PI_INLINE __m256i magic_bits() { return _mm256_set1_epi32(kMagicBits); }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_set1_epi32(3); }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    return {q4_nibbles(blk + 2), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
};

// Decode with VNNI: lanes 0..3 take the low nibbles (q), lanes 4..7 the high nibbles left in place
// (16 q, up to 240: products that only vpdpbusd's int32 sums can hold). The offsets (prepare) are
// bits(M) - 8 * lane sum of x in lanes 0..3 and bits(M16) - 128 * lane sum in lanes 4..7, so lanes
// 4..7 hold bits(M16) + 16 p_j, which is the float M16 + p_j; magic() takes M (M16) off. One AND
// instead of a shift and an AND per block.
template <class I>
struct Q4_0Vnni : Q4_0Base<I> {
  using W1 = typename Q4_0Base<I>::W1;
  static R1PI_INLINE __m256 magic() {
    return _mm256_setr_ps(kMagic, kMagic, kMagic, kMagic, kMagic16, kMagic16, kMagic16, kMagic16);
  }
  static R1PI_INLINE __m256i magic_bits() {
    return _mm256_setr_epi32(kMagicBits, kMagicBits, kMagicBits, kMagicBits, kMagic16Bits,
                             kMagic16Bits, kMagic16Bits, kMagic16Bits);
  }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_setr_epi32(3, 3, 3, 3, 7, 7, 7, 7); }
  static R1PI_INLINE __m256i nibble_masks() {
    return _mm256_setr_epi32(0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F, int32_t(0xF0F0F0F0),
                             int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0));
  }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    const __m256i raw =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    return {_mm256_and_si256(raw, nibble_masks()), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
};

// Types whose block is one scale (W::scale: an fp16 d looked up in lut, or MXFP4's exponent) and
// 32 signed weights of at most 128 in magnitude: Q8_0, and Q5_0, IQ4_NL and MXFP4 once unpacked
// (W::weights). The weights are signed both ways: |w| <= 128 and |x| <= 127 (Q8_0 activations)
// keep the pair sums of |w| * (x * sign(w)) within int16.
template <class I, class W>
struct SignedBlockPolicy {
  using Isa = I;
  static constexpr int kGroup = 1;
  static constexpr int64_t kBlockBytes = W::kBlockBytes;
  static constexpr int kRowsSingle = 4;
  static constexpr Corr kCorr = Corr::None;
  static constexpr bool kUnsignedX = false;
  struct W1 {
    __m256i aw;  // |w|
    __m256i w;   // w (for the sign)
    __m256 dw;
  };
  using WN = W1;
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * kBlockBytes;
    const __m256i w = W::weights(blk);
    return {_mm256_abs_epi8(w), w, _mm256_broadcast_ss(W::scale(blk, lut))};
  }
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i) {
    return Isa::dot4_add(_mm256_set1_epi32(kMagicBits), w.aw, _mm256_sign_epi8(x, w.w));
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    return unpack1<k>(row, b, lut);
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    return lanes1(w, _mm256_load_si256(reinterpret_cast<const __m256i*>(xq)), __m256i());
  }
};

// The blocks that lead with an fp16 d.
struct Fp16Scale {
  static R1PI_INLINE const float* scale(const uint8_t* blk, const float* lut) { return lut + load_u16(blk); }
};

struct Q8_0Weights : Fp16Scale {
  static constexpr int64_t kBlockBytes = sizeof(block_q8_0);
  static R1PI_INLINE __m256i weights(const uint8_t* blk) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
  }
};

// The 32 five-bit values (0..31) of a Q5_0 / Q5_1 block: the nibbles as Q4_0's, byte j's fifth bit
// bit j of qh (byte j / 8 of qh, moved to each element by a shuffle within each 128-bit half, then
// tested). Q5_0 takes 16 off.
inline __m256i q5_quants(const uint8_t* qh_bytes, const uint8_t* qs) {
  const __m256i qh = _mm256_set1_epi32(int32_t(load_u32(qh_bytes)));
  const __m256i spread = _mm256_shuffle_epi8(
      qh, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3,
                           3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                                        _mm256_set1_epi8(0x10));
  return _mm256_or_si256(q4_nibbles(qs), high);
}

struct Q5_0Weights : Fp16Scale {
  static constexpr int64_t kBlockBytes = sizeof(block_q5_0);
  static R1PI_INLINE __m256i weights(const uint8_t* blk) {
    return _mm256_sub_epi8(q5_quants(blk + 2, blk + 6), _mm256_set1_epi8(16));
  }
};

// IQ4_NL (and IQ4_XS), MXFP4: each of the 16 bytes' nibbles looked up in the sixteen levels (one
// byte shuffle), in element order.
inline __m256i nibble_levels(const int8_t* levels16, const uint8_t* qs) {
  const __m256i levels = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(levels16)));
  return _mm256_shuffle_epi8(levels, q4_nibbles(qs));
}
inline __m256i iq4_levels(const uint8_t* qs) { return nibble_levels(kvalues_iq4nl, qs); }

struct Iq4NlWeights : Fp16Scale {
  static constexpr int64_t kBlockBytes = sizeof(block_iq4_nl);
  static R1PI_INLINE __m256i weights(const uint8_t* blk) { return iq4_levels(blk + 2); }
};

// MXFP4: 2^(e - 128) for every exponent byte, built at compile time.
inline constexpr auto kE8m0Half = [] {
  std::array<float, 256> t{};
  for (int e = 0; e < 256; ++e) t[size_t(e)] = e8m0_to_fp32_half(uint8_t(e));
  return t;
}();
struct Mxfp4Weights {
  static constexpr int64_t kBlockBytes = sizeof(block_mxfp4);
  static R1PI_INLINE const float* scale(const uint8_t* blk, const float*) { return &kE8m0Half[blk[0]]; }
  static R1PI_INLINE __m256i weights(const uint8_t* blk) { return nibble_levels(kvalues_mxfp4, blk + 1); }
};

template <class I>
using Q8_0Policy = SignedBlockPolicy<I, Q8_0Weights>;
template <class I>
using Q5_0Policy = SignedBlockPolicy<I, Q5_0Weights>;
template <class I>
using Iq4NlPolicy = SignedBlockPolicy<I, Iq4NlWeights>;
template <class I>
using Mxfp4Policy = SignedBlockPolicy<I, Mxfp4Weights>;

// Q6_K: block k (0..7) of a super-block is its half h = k / 4, quarter g = k % 4 (q6_K_layout.h):
// low bits ql[64h + 32(g & 1) + l] (low nibble for g < 2), high bits (qh[32h + l] >> 2g) & 3.
// Lanes 0..3 take scales[2k], lanes 4..7 scales[2k + 1]: madd multiplies the pair sums by them
// (Q6_KAvx2, and the weight-side path of both), or, in decode with VNNI, a float multiply
// (Q6_KVnni).
template <class I>
struct Q6_KBase {
  using Isa = I;
  static constexpr int kGroup = 8;
  static constexpr int64_t kBlockBytes = sizeof(block_q6_K) / 8;
  // In 256 bits four rows were slower than two.
  static constexpr int kRowsSingle = 2;
  static constexpr bool kUnsignedX = true;
  struct WN {
    __m256i w;     // q - 32
    __m256i s;
    __m256i corr;  // bits(magic) - 128 * scale * lane sums of w
    __m256 dw;
  };
  // Block k's 32 quants q (0..63) in element order.
  template <int k>
  static R1PI_INLINE __m256i quants(const block_q6_K* sb) {
    constexpr int h = k / 4, g = k % 4;
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->ql + 64 * h + 32 * (g & 1)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->qh + 32 * h));
    const __m256i m0F = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    __m256i lo, hi;
    if constexpr (g < 2) lo = _mm256_and_si256(ql, m0F);
    else lo = _mm256_and_si256(_mm256_srli_epi16(ql, 4), m0F);
    if constexpr (g == 0) hi = _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30);
    else if constexpr (g == 1) hi = _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30);
    else if constexpr (g == 2) hi = _mm256_and_si256(qh, m30);
    else hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30);
    return _mm256_or_si256(lo, hi);
  }
  // Block k's two scales as int16 pairs: scales[2k] for lanes 0..3, scales[2k + 1] for 4..7.
  template <int k>
  static R1PI_INLINE __m256i pair_scales(const block_q6_K* sb) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    const __m128i pick = _mm_setr_epi8(2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k,
                                       2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1,
                                       2 * k + 1, 2 * k + 1, 2 * k + 1);
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, pick));
  }
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  // |(x + 128) (q - 32)| <= 255 * 32 per product: pair sums fit int16.
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(row) + b / 8;
    const __m256i s = pair_scales<k>(sb);
    const __m256i w = _mm256_sub_epi8(quants<k>(sb), _mm256_set1_epi8(32));
    const __m256i c = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(int8_t(0x80)), w), s);
    return {w, s, _mm256_sub_epi32(_mm256_set1_epi32(kMagicBits), c), _mm256_broadcast_ss(lut + sb->d)};
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq));
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(x, w.w), w.s), w.corr);
  }
};

// (sum q*x - 32 (x0 + x1)) per pair is (q0 - 32) x0 + (q1 - 32) x1, |.| <= 8128; madd multiplies by
// the scale: p_j = s * sum of the lane's four (q - 32) x, |p_j| < 2^21.
template <class I>
struct Q6_KAvx2 : Q6_KBase<I> {
  using Base = Q6_KBase<I>;
  static constexpr Corr kCorr = Corr::Pairs;
  struct W1 {
    __m256i q;  // 0..63
    __m256i s;  // int16 scales (pairs)
    __m256 dw;
  };
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(row) + b / 8;
    return {Base::template quants<k>(sb), Base::template pair_scales<k>(sb),
            _mm256_broadcast_ss(lut + sb->d)};
  }
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(w.q, x), corr);
    return _mm256_add_epi32(_mm256_madd_epi16(pairs, w.s), _mm256_set1_epi32(kMagicBits));
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
};

// vpdpbusd gives each lane's t = sum of four (q - 32) x exactly (offsets as for Q4_0), and s * t,
// |s * t| < 2^21, is exact in float.
template <class I>
struct Q6_KVnni : Q6_KBase<I> {
  using Isa = I;
  using Base = Q6_KBase<I>;
  static constexpr Corr kCorr = Corr::Lanes;
  struct W1 {
    __m256i q;   // 0..63
    __m256 sf;   // float scales (lanes)
    __m256 dw;
  };
  static R1PI_INLINE __m256i magic_bits() { return _mm256_set1_epi32(kMagicBits); }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_set1_epi32(5); }
  // The super-block's 16 scales as floats, 8 per register (the compiler computes them once for
  // the eight blocks), and block k's pair spread over the lanes.
  template <int k>
  static R1PI_INLINE __m256 lane_scales(const block_q6_K* sb) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    const __m256 half = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(k < 4 ? sc : _mm_srli_si128(sc, 8)));
    constexpr int i = 2 * (k % 4);
    return _mm256_permutevar8x32_ps(half, _mm256_setr_epi32(i, i, i, i, i + 1, i + 1, i + 1, i + 1));
  }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(row) + b / 8;
    return {Base::template quants<k>(sb), lane_scales<k>(sb), _mm256_broadcast_ss(lut + sb->d)};
  }
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    return Isa::dot4_add(corr, w.q, x);
  }
  static R1PI_INLINE __m256 scaled(__m256 t, const W1& w) { return _mm256_mul_ps(t, w.sf); }
};

// Q4_K (matmul_min, kernels_x86_min_term.h): block k (0..7) of a super-block is its sub-block k,
// the low (k even) or high (k odd) nibbles of qs[32 (k / 2) ..] (q4_K_layout.h).
template <int k>
R1PI_INLINE __m256i k4_nibbles(const uint8_t* qs) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (k / 2)));
  return _mm256_and_si256(k % 2 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0F));
}

// The 32 bytes at p for one row and at q for another, as one 512-bit register (AVX-512 only).
R1PI_INLINE __m512i two_rows(const uint8_t* p, const uint8_t* q) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)), 1);
}

template <int k>
R1PI_INLINE __m512i k4_nibbles2(const uint8_t* qs0, const uint8_t* qs1) {
  const __m512i raw = two_rows(qs0 + 32 * (k / 2), qs1 + 32 * (k / 2));
  return _mm512_and_si512(k % 2 ? _mm512_srli_epi16(raw, 4) : raw, _mm512_set1_epi8(0x0F));
}

// What Q4_K and Q5_K share in matmul_min: the head (d, dmin and the eight 6-bit scales and mins,
// k4_scales_mins), the factors (d * x.d) * scale, the lanes' sums of q * x.q (|q0 x0 + q1 x1| <=
// 2 * 31 * 127: maddubs never saturates) and the min part -(dmin * x.d) * (min * sum).
template <class I, class B>
struct K4Base : GroupPolicy<I, sizeof(B), XSums::Block, false, true> {
  using Block = B;
  struct Head {
    __m256 dw, dmin, scales, mins;
  };
  static R1PI_INLINE Head head(const uint8_t* g, const float* lut, int) {
    const B* sb = reinterpret_cast<const B*>(g);
    alignas(16) uint8_t codes[16];
    k4_scales_mins(sb->scales, codes);
    const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(codes));
    return {_mm256_broadcast_ss(lut + sb->d), _mm256_broadcast_ss(lut + sb->dmin),
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(c)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(c, 8)))};
  }
  static R1PI_INLINE __m256 factors(const Head& h, __m256 dx) { return _mm256_mul_ps(_mm256_mul_ps(h.dw, dx), h.scales); }
  static R1PI_INLINE __m256 lanes(__m256i q, __m256i x) {
    return _mm256_cvtepi32_ps(I::dot4_add(_mm256_setzero_si256(), q, x));
  }
  static R1PI_INLINE __m256 min_part(const Head& h, __m256 dx, __m256 s0, __m256, __m256 acc) {
    return _mm256_fnmadd_ps(_mm256_mul_ps(h.dmin, dx), _mm256_mul_ps(h.mins, s0), acc);
  }
};

template <class I>
struct Q4_KPolicy : K4Base<I, block_q4_K> {
  template <int k>
  static R1PI_INLINE __m256i quants(const block_q4_K* sb) { return k4_nibbles<k>(sb->qs); }
  template <int k>
  static R1PI_INLINE __m256i unpack(const typename K4Base<I, block_q4_K>::Head&, const uint8_t* g) {
    return quants<k>(reinterpret_cast<const block_q4_K*>(g));
  }
  template <int k>
  static R1PI_INLINE __m512i quants2(const block_q4_K* a, const block_q4_K* b) {
    return k4_nibbles2<k>(a->qs, b->qs);
  }
};

// Q5_K (matmul_min): Q4_K's nibbles with a fifth bit, bit k of qh[l] for element l of sub-block k
// (q4_K_layout.h), moved to bit 4 of each byte (16-bit shifts: the mask drops what crosses bytes).
template <class I>
struct Q5_KPolicy : K4Base<I, block_q5_K> {
  template <int k>
  static R1PI_INLINE __m256i unpack(const typename K4Base<I, block_q5_K>::Head&, const uint8_t* g) {
    return quants<k>(reinterpret_cast<const block_q5_K*>(g));
  }
  template <int k>
  static R1PI_INLINE __m256i quants(const block_q5_K* sb) {
    const __m256i lo = k4_nibbles<k>(sb->qs);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->qh));
    const __m256i at4 = k <= 4 ? _mm256_slli_epi16(qh, 4 - k) : _mm256_srli_epi16(qh, k - 4);
    return _mm256_or_si256(lo, _mm256_and_si256(at4, _mm256_set1_epi8(0x10)));
  }
  template <int k>
  static R1PI_INLINE __m512i quants2(const block_q5_K* a, const block_q5_K* b) {
    const __m512i qh = two_rows(a->qh, b->qh);
    const __m512i at4 = k <= 4 ? _mm512_slli_epi16(qh, 4 - k) : _mm512_srli_epi16(qh, k - 4);
    return _mm512_or_si512(k4_nibbles2<k>(a->qs, b->qs), _mm512_and_si512(at4, _mm512_set1_epi8(0x10)));
  }
};

}  // namespace
}  // namespace r1pi
