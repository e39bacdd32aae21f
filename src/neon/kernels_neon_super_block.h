// The quantised products of the NEON backends for the types of 256-element super-blocks (Q6_K,
// Q4_K, Q5_K, IQ4_XS, Q3_K, Q2_K): per type an unpacker of a super-block, and one R weight rows x
// T tokens tile of the recipe (kernels.h) for all of them, with its Ops for the tiling of
// kernels_neon_shared.h. The lane sums (PlainDot, SdotDot) and the 32-element types are
// kernels_neon_quant.h's. Included through kernels_neon_table.h only, which builds each for both lane sums.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <cstring>

#include "ggml/legacy_layout.h"
#include "ggml/q4_K_layout.h"
#include "ggml/quant_blocks.h"
#include "neon/kernels_neon_quant.h"
#include "neon/kernels_neon_shared.h"

namespace r1pi {
namespace {

// One row's super-block as super_block_tile takes it.
struct SuperBlock {
  alignas(16) int8_t q[QK_K];  // the 256 integer values in element order
  // kScalePer32: scales[k] is 32-element sub-block k's (k < 8), in the block's float factor (Q4_K's
  // q part); otherwise scales[s] is 16-element sub-block s's, in the lanes' integer sums (Q6_K's).
  int8_t scales[16];
  // kMin: the mins as floats (exact), in the accumulators' lanes: mins[h][.] for lanes 4h .. 4h+3,
  // lane k being block k. [h][0]: the min of the block (kMinPer16: of its first 16 elements);
  // [h][1] (kMinPer16 only): of its last 16.
  float32x4_t mins[2][2];
  float d, dmin;
};

// Eight bytes as two vectors of floats (exact).
inline void widen_to_float(uint8x8_t v, float32x4_t* out) {
  const uint16x8_t w = vmovl_u8(v);
  out[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(w)));
  out[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(w)));
}

// ---- unpackers: one super-block into a SuperBlock --------------------------------------------

// Q6_K: values q - 32 (-32..31) in element order (see q6_K_layout.h): half h holds elements
// 128h .. 128h+127; quarter g of it is
//   g = 0: ql[l] & 15       | (qh[l] & 3) << 4         g = 1: ql[l+32] & 15 | (qh[l] >> 2 & 3) << 4
//   g = 2: ql[l] >> 4       | (qh[l] >> 4 & 3) << 4    g = 3: ql[l+32] >> 4 | (qh[l] >> 6) << 4
inline void unpack_q6_K_neon(const block_q6_K& b, int8_t* q) {
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  const uint8x16_t m3 = vdupq_n_u8(0x30);
  const int8x16_t k32 = vdupq_n_s8(32);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    int8_t* out = q + 128 * h;
    for (int half16 = 0; half16 < 2; ++half16) {  // l = 16 * half16 .. +15
      const int l = 16 * half16;
      const uint8x16_t lo_a = vld1q_u8(ql + l);
      const uint8x16_t lo_b = vld1q_u8(ql + l + 32);
      const uint8x16_t hi = vld1q_u8(qh + l);
      const uint8x16_t g0 = vorrq_u8(vandq_u8(lo_a, m4), vandq_u8(vshlq_n_u8(hi, 4), m3));
      const uint8x16_t g1 = vorrq_u8(vandq_u8(lo_b, m4), vandq_u8(vshlq_n_u8(hi, 2), m3));
      const uint8x16_t g2 = vorrq_u8(vshrq_n_u8(lo_a, 4), vandq_u8(hi, m3));
      const uint8x16_t g3 = vorrq_u8(vshrq_n_u8(lo_b, 4), vandq_u8(vshrq_n_u8(hi, 2), m3));
      vst1q_s8(out + l + 0, vsubq_s8(vreinterpretq_s8_u8(g0), k32));
      vst1q_s8(out + l + 32, vsubq_s8(vreinterpretq_s8_u8(g1), k32));
      vst1q_s8(out + l + 64, vsubq_s8(vreinterpretq_s8_u8(g2), k32));
      vst1q_s8(out + l + 96, vsubq_s8(vreinterpretq_s8_u8(g3), k32));
    }
  }
}

struct Q6_KW {
  using Block = block_q6_K;
  static constexpr bool kScalePer32 = false, kMin = false, kMinPer16 = false;
  static void unpack(const Block& b, SuperBlock& u) {
    unpack_q6_K_neon(b, u.q);
    std::memcpy(u.scales, b.scales, sizeof u.scales);
    u.d = h2f(b.d);
  }
};

// Q4_K: values 0..15 in element order (q4_K_layout.h: chunk c's 32 bytes, low nibbles then high).
inline void unpack_q4_K_neon(const block_q4_K& b, int8_t* q) {
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 2; ++h) {
      const uint8x16_t v = vld1q_u8(b.qs + 32 * c + 16 * h);
      vst1q_s8(q + 64 * c + 16 * h, vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F))));
      vst1q_s8(q + 64 * c + 32 + 16 * h, vreinterpretq_s8_u8(vshrq_n_u8(v, 4)));
    }
}

// Q5_K: bit 2c (low nibble's element) or 2c + 1 (high nibble's) of qh[l] adds 16 (q4_K_layout.h).
inline void unpack_q5_K_neon(const block_q5_K& b, int8_t* q) {
  const uint8x16_t one = vdupq_n_u8(1);
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 2; ++h) {
      const uint8x16_t v = vld1q_u8(b.qs + 32 * c + 16 * h);
      const uint8x16_t qh = vld1q_u8(b.qh + 16 * h);
      const uint8x16_t lo_bit = vandq_u8(vshlq_u8(qh, vdupq_n_s8(int8_t(-2 * c))), one);
      const uint8x16_t hi_bit = vandq_u8(vshlq_u8(qh, vdupq_n_s8(int8_t(-2 * c - 1))), one);
      vst1q_s8(q + 64 * c + 16 * h,
               vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, vdupq_n_u8(0x0F)), vshlq_n_u8(lo_bit, 4))));
      vst1q_s8(q + 64 * c + 32 + 16 * h, vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), vshlq_n_u8(hi_bit, 4))));
    }
}

// Q4_K and Q5_K (kernels.h's recipe for a type with a min term): unsigned values (the signed
// products are the same), the 6-bit scales in the block factor, a 6-bit min per block.
template <class B, void (*Unpack)(const B&, int8_t*)>
struct K4W {
  using Block = B;
  static constexpr bool kScalePer32 = true, kMin = true, kMinPer16 = false;
  static void unpack(const Block& b, SuperBlock& u) {
    Unpack(b, u.q);
    alignas(16) uint8_t codes[16];
    k4_scales_mins(b.scales, codes);
    std::memcpy(u.scales, codes, 8);
    float32x4_t m[2];
    widen_to_float(vld1_u8(codes + 8), m);
    u.mins[0][0] = m[0];
    u.mins[1][0] = m[1];
    u.d = h2f(b.d);
    u.dmin = h2f(b.dmin);
  }
};
using Q4_KW = K4W<block_q4_K, unpack_q4_K_neon>;
using Q5_KW = K4W<block_q5_K, unpack_q5_K_neon>;

// IQ4_XS: sub-block k is an IQ4_NL block's levels (qs[16k ..]) with the factor scale_k - 32 (as
// Q4_K's q part), no min.
struct Iq4XsW {
  using Block = block_iq4_xs;
  static constexpr bool kScalePer32 = true, kMin = false, kMinPer16 = false;
  static void unpack(const Block& b, SuperBlock& u) {
    for (int k = 0; k < QK_K / QK8_0; ++k) {
      int8x16_t w0, w1;
      iq4_levels(b.qs + 16 * k, w0, w1);
      vst1q_s8(u.q + 32 * k, w0);
      vst1q_s8(u.q + 32 * k + 16, w1);
      u.scales[k] = int8_t(iq4_xs_scale(b, k) - 32);
    }
    u.d = h2f(b.d);
  }
};

// Q2_K and Q3_K (q23_K_layout.h): half h of the values takes qs[32h .. 32h+31]; bits 2j, 2j+1 of
// qs[32h + l] are element 128h + 32j + l. Shifting each 16 bytes right by two per j walks them.
inline void unpack_q2_K_neon(const block_q2_K& b, int8_t* q) {
  for (int h = 0; h < 2; ++h)
    for (int half = 0; half < 2; ++half) {  // l = 16 * half .. +15
      uint8x16_t v = vld1q_u8(b.qs + 32 * h + 16 * half);
      for (int j = 0; j < 4; ++j) {
        vst1q_s8(q + 128 * h + 32 * j + 16 * half, vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(3))));
        v = vshrq_n_u8(v, 2);
      }
    }
}

// Q2_K: the low nibble of scales[s] the scale of 16-element sub-block s, the high one its min
// (block k's halves are sub-blocks 2k and 2k + 1).
struct Q2_KW {
  using Block = block_q2_K;
  static constexpr bool kScalePer32 = false, kMin = true, kMinPer16 = true;
  static void unpack(const Block& b, SuperBlock& u) {
    unpack_q2_K_neon(b, u.q);
    vst1q_s8(u.scales, vreinterpretq_s8_u8(vandq_u8(vld1q_u8(b.scales), vdupq_n_u8(0x0F))));
    const uint8x8x2_t halves = vld2_u8(b.scales);  // val[0]: sub-blocks 2k, val[1]: 2k + 1
    for (int i = 0; i < 2; ++i) {
      float32x4_t m[2];
      widen_to_float(vshr_n_u8(halves.val[i], 4), m);
      u.mins[0][i] = m[0];
      u.mins[1][i] = m[1];
    }
    u.d = h2f(b.d);
    u.dmin = h2f(b.dmin);
  }
};

// Q3_K: the two low bits as Q2_K's, the high bit bit 4h + j of hmask[l] (clear: 4 less): values
// (low | high << 2) - 4, -4..3. The hmask bytes shift right by one per j, through both halves.
inline void unpack_q3_K_neon(const block_q3_K& b, int8_t* q) {
  const uint8x16_t one = vdupq_n_u8(1);
  for (int half = 0; half < 2; ++half) {  // l = 16 * half .. +15
    uint8x16_t hm = vld1q_u8(b.hmask + 16 * half);
    for (int h = 0; h < 2; ++h) {
      uint8x16_t v = vld1q_u8(b.qs + 32 * h + 16 * half);
      for (int j = 0; j < 4; ++j) {
        const uint8x16_t u = vorrq_u8(vandq_u8(v, vdupq_n_u8(3)), vshlq_n_u8(vandq_u8(hm, one), 2));
        vst1q_s8(q + 128 * h + 32 * j + 16 * half, vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(4)));
        v = vshrq_n_u8(v, 2);
        hm = vshrq_n_u8(hm, 1);
      }
    }
  }
}

// Q3_K's sixteen scales, code - 32 (-32..31), four sub-blocks per 32-bit word: code s has its low
// four bits in scales[s % 8] (low nibble for s < 8, high otherwise), its high two at bit 2 (s / 4)
// of scales[8 + s % 4] (q23_K_layout.h's q3_K_scale_code).
inline void q3_K_scales(const uint8_t* scales, int8_t* out) {
  uint32_t a[3];
  std::memcpy(a, scales, 12);
  const uint32_t low4 = 0x0F0F0F0Fu, two = 0x03030303u;
  const uint32_t codes[4] = {(a[0] & low4) | ((a[2] & two) << 4), (a[1] & low4) | (((a[2] >> 2) & two) << 4),
                             ((a[0] >> 4) & low4) | (((a[2] >> 4) & two) << 4),
                             ((a[1] >> 4) & low4) | (((a[2] >> 6) & two) << 4)};
  uint8x16_t c;
  std::memcpy(&c, codes, sizeof c);
  vst1q_s8(out, vsubq_s8(vreinterpretq_s8_u8(c), vdupq_n_s8(32)));
}

struct Q3_KW {
  using Block = block_q3_K;
  static constexpr bool kScalePer32 = false, kMin = false, kMinPer16 = false;
  static void unpack(const Block& b, SuperBlock& u) {
    unpack_q3_K_neon(b, u.q);
    q3_K_scales(b.scales, u.scales);
    u.d = h2f(b.d);
  }
};

// ---- the tile: R weight rows x T tokens ------------------------------------------------------

// A super-block of 256 covers 8 Q8_0 blocks; block k is elements 32k .. 32k+31, its lanes 0..3 in
// 16-element sub-block 2k, lanes 4..7 in 2k+1, its lane sums one Dot per 16 bytes. Per block:
//   kScalePer32 (Q4_K, Q5_K, IQ4_XS): fma((d * x.d) * scale_k, p, acc)
//   otherwise (Q6_K, Q3_K, Q2_K):     fma(d * x.d, scale_s * p, acc)
// and with kMin, after the eight blocks, lane k takes block k's min part as
// vfmsq(acc, dmin * x_k.d, m_k): acc - a * b in one rounding, the recipe's
// fma(-(dmin * x_k.d), m_k, acc), with m_k = min_k * (sum of x_k's quants) (Q4_K, Q5_K) or
// min_2k * (sum of its first 16) + min_2k+1 * (of its last 16) (kMinPer16: Q2_K), computed in
// floats: integers below 2^24, so every product and sum is exact.
template <class Dot, class P, int R, int T>
inline void super_block_tile(int64_t nsb, const typename P::Block* const* w, const block_q8_0* const* x,
                             float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  SuperBlock u[R];
  for (int64_t sb = 0; sb < nsb; ++sb) {
    for (int r = 0; r < R; ++r) P::unpack(w[r][sb], u[r]);
    alignas(16) float xd[T][8];
    // kMin: the sums of x's quants per block ([0]), or per half block ([0], [1]: kMinPer16).
    alignas(16) float xsum[T][2][8];
    for (int k = 0; k < QK_K / QK8_0; ++k) {
      int8x16_t xq[T][2];
      for (int t = 0; t < T; ++t) {
        const block_q8_0& xb = x[t][sb * (QK_K / QK8_0) + k];
        xq[t][0] = vld1q_s8(xb.qs);
        xq[t][1] = vld1q_s8(xb.qs + 16);
        xd[t][k] = h2f(xb.d);
        if constexpr (P::kMin) {
          const int32_t first = vaddlvq_s8(xq[t][0]), last = vaddlvq_s8(xq[t][1]);
          if constexpr (P::kMinPer16) {
            xsum[t][0][k] = float(first);
            xsum[t][1][k] = float(last);
          } else {
            xsum[t][0][k] = float(first + last);
          }
        }
      }
      for (int r = 0; r < R; ++r) {
        const int8x16_t w0 = vld1q_s8(u[r].q + QK8_0 * k);
        const int8x16_t w1 = vld1q_s8(u[r].q + QK8_0 * k + 16);
        if constexpr (P::kScalePer32) {
          const float scale = float(u[r].scales[k]);
          for (int t = 0; t < T; ++t) {
            const float e = (u[r].d * xd[t][k]) * scale;
            acc[r][t][0] = vfmaq_n_f32(acc[r][t][0], vcvtq_f32_s32(Dot::dot(w0, xq[t][0])), e);
            acc[r][t][1] = vfmaq_n_f32(acc[r][t][1], vcvtq_f32_s32(Dot::dot(w1, xq[t][1])), e);
          }
        } else {
          const int32_t s0 = u[r].scales[2 * k];
          const int32_t s1 = u[r].scales[2 * k + 1];
          for (int t = 0; t < T; ++t) {
            const float d = u[r].d * xd[t][k];
            const int32x4_t p0 = vmulq_n_s32(Dot::dot(w0, xq[t][0]), s0);
            const int32x4_t p1 = vmulq_n_s32(Dot::dot(w1, xq[t][1]), s1);
            acc[r][t][0] = vfmaq_n_f32(acc[r][t][0], vcvtq_f32_s32(p0), d);
            acc[r][t][1] = vfmaq_n_f32(acc[r][t][1], vcvtq_f32_s32(p1), d);
          }
        }
      }
    }
    if constexpr (P::kMin) {
      for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t)
          for (int h = 0; h < 2; ++h) {
            float32x4_t m = vmulq_f32(u[r].mins[h][0], vld1q_f32(xsum[t][0] + 4 * h));
            if constexpr (P::kMinPer16) m = vaddq_f32(m, vmulq_f32(u[r].mins[h][1], vld1q_f32(xsum[t][1] + 4 * h)));
            const float32x4_t a = vmulq_n_f32(vld1q_f32(xd[t] + 4 * h), u[r].dmin);
            acc[r][t][h] = vfmsq_f32(acc[r][t][h], a, m);
          }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
}

template <class Dot, class P>
struct SuperBlockOps {
  using W = typename P::Block;
  using X = block_q8_0;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    super_block_tile<Dot, P, R, T>(n / QK_K, w, x, out);
  }
};

}  // namespace
}  // namespace r1pi

#endif
