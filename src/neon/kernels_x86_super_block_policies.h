// The policies of matmul_min (kernels_x86_min_term.h, which says what a policy gives) for the types
// beside Q4_K and Q5_K whose blocks take their factors from a group of eight: Q4_1 and Q5_1 (eight
// consecutive blocks, a min part), IQ4_XS (a scale per block in its factor). One template over the
// backend's Isa each; the same bytes as the scalar reference (recipe in kernels.h).
#pragma once

#include "neon/kernels_x86_policies.h"

namespace r1pi {
namespace {

// float(the lane sums of four u * s), u unsigned: exact (|sum| < 2^24).
template <class I>
R1PI_INLINE __m256 lane_sums(__m256i u, __m256i s) {
  return _mm256_cvtepi32_ps(I::dot4_add(_mm256_setzero_si256(), u, s));
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
};

struct Q4_1Quants {
  static constexpr int64_t kBlockBytes = sizeof(block_q4_1);
  static R1PI_INLINE __m256i quants(const uint8_t* blk) { return q4_nibbles(blk + 4); }
};
struct Q5_1Quants {
  static constexpr int64_t kBlockBytes = sizeof(block_q5_1);
  static R1PI_INLINE __m256i quants(const uint8_t* blk) { return q5_quants(blk + 4, blk + 8); }
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
};

}  // namespace
}  // namespace r1pi
