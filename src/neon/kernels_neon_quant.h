// The quantised products of the NEON backends, templates over the four lane sums of 16 int8
// products: PlainDot (smull, pairwise widening adds: "neon") or SdotDot (one sdot: "neon-dotprod").
// Per weight type a decoder or unpacker and an R weight rows x T tokens tile of the recipe
// (kernels.h), with its Ops for the tiling of kernels_neon_shared.h. Included by kernels_neon.cpp
// only, which builds each for both lane sums.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include "ggml/q4_K_layout.h"
#include "ggml/quant_blocks.h"
#include "neon/kernels_neon_shared.h"

namespace r1pi {
namespace {

// The four lane sums of 16 int8 products: lane k = sum over bytes 4k .. 4k+3 of a * b (exact).
struct PlainDot {
  static int32x4_t dot(int8x16_t a, int8x16_t b) {
    // |a * b| <= 128 * 128 fits int16; the pairwise sums widen to int32 before they could overflow.
    const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    const int16x8_t hi = vmull_high_s8(a, b);
    return vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi));
  }
};

#if defined(__ARM_FEATURE_DOTPROD)
struct SdotDot {
  static int32x4_t dot(int8x16_t a, int8x16_t b) { return vdotq_s32(vdupq_n_s32(0), a, b); }
};
#endif

// ---- weight decoders for the 32-element block types -----------------------------------------

// Each gives a block's 32 integer weights (elements 0..15 and 16..31) and its fp16 scale.
struct Q8_0W {
  using Block = block_q8_0;
  static constexpr int kPerBlock = QK8_0;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    w0 = vld1q_s8(b.qs);
    w1 = vld1q_s8(b.qs + 16);
  }
};

struct Q4_0W {
  using Block = block_q4_0;
  static constexpr int kPerBlock = QK4_0;
  // Element i < 16 is the low nibble of qs[i], element 16 + i its high nibble; both minus 8.
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    const uint8x16_t qs = vld1q_u8(b.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    w0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qs, vdupq_n_u8(0x0F))), eight);
    w1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qs, 4)), eight);
  }
};

// Q5_0: Q4_0's nibbles, element j's fifth bit bit j of qh (a byte of qh per eight elements,
// tested bit by bit), minus 16.
struct Q5_0W {
  using Block = block_q5_0;
  static constexpr int kPerBlock = QK4_0;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    const uint8x16_t qs = vld1q_u8(b.qs);
    const uint8x16_t bits = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
    const uint8x16_t sixteen = vdupq_n_u8(0x10);
    const uint8x16_t h0 = vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(b.qh[0]), vdup_n_u8(b.qh[1])), bits), sixteen);
    const uint8x16_t h1 = vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(b.qh[2]), vdup_n_u8(b.qh[3])), bits), sixteen);
    w0 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(qs, vdupq_n_u8(0x0F)), h0)), vdupq_n_s8(16));
    w1 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(qs, 4), h1)), vdupq_n_s8(16));
  }
};

// IQ4_NL: each nibble looked up in the sixteen levels (one table lookup per sixteen).
struct Iq4NlW {
  using Block = block_iq4_nl;
  static constexpr int kPerBlock = QK4_0;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    const uint8x16_t qs = vld1q_u8(b.qs);
    const int8x16_t levels = vld1q_s8(kvalues_iq4nl);
    w0 = vqtbl1q_s8(levels, vandq_u8(qs, vdupq_n_u8(0x0F)));
    w1 = vqtbl1q_s8(levels, vshrq_n_u8(qs, 4));
  }
};

// ---- quantised dot products: R weight rows x T tokens ---------------------------------------

// out[r][t] = the recipe's dot of row w[r] with token x[t], over nb 32-element blocks. Each (r, t)
// has its own eight lanes (acc[r][t][0] = lanes 0..3, [1] = lanes 4..7), updated once per block
// in block order: exactly the scalar chain.
template <class Dot, class WT, int R, int T>
inline void quant_tile(int64_t nb, const typename WT::Block* const* w, const block_q8_0* const* x,
                       float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    int8x16_t xq[T][2];
    float xd[T];
    for (int t = 0; t < T; ++t) {
      xq[t][0] = vld1q_s8(x[t][i].qs);
      xq[t][1] = vld1q_s8(x[t][i].qs + 16);
      xd[t] = h2f(x[t][i].d);
    }
    for (int r = 0; r < R; ++r) {
      int8x16_t w0, w1;
      WT::decode(w[r][i], w0, w1);
      const float wd = h2f(w[r][i].d);
      for (int t = 0; t < T; ++t) {
        const float d = wd * xd[t];
        const int32x4_t p0 = Dot::dot(w0, xq[t][0]);
        const int32x4_t p1 = Dot::dot(w1, xq[t][1]);
        // fma(d, float(p), acc): vfmaq_n_f32(acc, p, d) = acc + p * d in one rounding.
        acc[r][t][0] = vfmaq_n_f32(acc[r][t][0], vcvtq_f32_s32(p0), d);
        acc[r][t][1] = vfmaq_n_f32(acc[r][t][1], vcvtq_f32_s32(p1), d);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
}

// Q6_K: a super-block of 256 covers 8 Q8_0 blocks. Block k's lanes 0..3 lie in sub-block 2k and
// lanes 4..7 in 2k+1; p_bj = scale * (exact four-product sum), d_b = d(super-block) * d(x block).
//
// Unpacks a super-block's 256 values q - 32 (-32..31) in element order (see q6_K_layout.h):
// half h holds elements 128h .. 128h+127; quarter g of it is
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

template <class Dot, int R, int T>
inline void q6_K_tile(int64_t nsb, const block_q6_K* const* w, const block_q8_0* const* x,
                      float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  alignas(16) int8_t q[R][QK_K];
  for (int64_t sb = 0; sb < nsb; ++sb) {
    float dw[R];
    for (int r = 0; r < R; ++r) {
      unpack_q6_K_neon(w[r][sb], q[r]);
      dw[r] = h2f(w[r][sb].d);
    }
    for (int k = 0; k < QK_K / QK8_0; ++k) {
      int8x16_t xq[T][2];
      float xd[T];
      for (int t = 0; t < T; ++t) {
        const block_q8_0& xb = x[t][sb * (QK_K / QK8_0) + k];
        xq[t][0] = vld1q_s8(xb.qs);
        xq[t][1] = vld1q_s8(xb.qs + 16);
        xd[t] = h2f(xb.d);
      }
      for (int r = 0; r < R; ++r) {
        const int8x16_t w0 = vld1q_s8(q[r] + QK8_0 * k);
        const int8x16_t w1 = vld1q_s8(q[r] + QK8_0 * k + 16);
        const int32_t s0 = w[r][sb].scales[2 * k];
        const int32_t s1 = w[r][sb].scales[2 * k + 1];
        for (int t = 0; t < T; ++t) {
          const float d = dw[r] * xd[t];
          const int32x4_t p0 = vmulq_n_s32(Dot::dot(w0, xq[t][0]), s0);
          const int32x4_t p1 = vmulq_n_s32(Dot::dot(w1, xq[t][1]), s1);
          acc[r][t][0] = vfmaq_n_f32(acc[r][t][0], vcvtq_f32_s32(p0), d);
          acc[r][t][1] = vfmaq_n_f32(acc[r][t][1], vcvtq_f32_s32(p1), d);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
}

// Q4_K and Q5_K (kernels.h's recipe for a type with a min term). Each super-block's 256 values
// (unsigned, 0..31: the signed products are the same) are unpacked in element order; block k is
// sub-block k, its factor (d * x.d) * scale_k, its lane sums one Dot per 16 bytes. After the eight
// blocks, lane s (acc[.][.][0] lanes 0..3: sub-blocks 0..3, [1]: 4..7) takes
// vfmsq(acc, dmin * x_s.d, min_s * (sum of x_s's quants)): acc - a * b in one rounding, the
// recipe's fma(-(dmin * x_s.d), ..., acc).
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

template <class Dot, class Block, void (*Unpack)(const Block&, int8_t*), int R, int T>
inline void min_term_tile(int64_t nsb, const Block* const* w, const block_q8_0* const* x, float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  alignas(16) int8_t q[R][QK_K];
  alignas(16) uint8_t codes[R][16];
  for (int64_t sb = 0; sb < nsb; ++sb) {
    float dw[R], dmin[R];
    for (int r = 0; r < R; ++r) {
      Unpack(w[r][sb], q[r]);
      k4_scales_mins(w[r][sb].scales, codes[r]);
      dw[r] = h2f(w[r][sb].d);
      dmin[r] = h2f(w[r][sb].dmin);
    }
    alignas(16) float xd[T][8], xs[T][8];
    for (int k = 0; k < QK_K / QK8_0; ++k) {
      int8x16_t xq[T][2];
      for (int t = 0; t < T; ++t) {
        const block_q8_0& xb = x[t][sb * (QK_K / QK8_0) + k];
        xq[t][0] = vld1q_s8(xb.qs);
        xq[t][1] = vld1q_s8(xb.qs + 16);
        xd[t][k] = h2f(xb.d);
        xs[t][k] = float(int32_t(vaddlvq_s8(xq[t][0])) + int32_t(vaddlvq_s8(xq[t][1])));
      }
      for (int r = 0; r < R; ++r) {
        const int8x16_t w0 = vld1q_s8(q[r] + QK8_0 * k);
        const int8x16_t w1 = vld1q_s8(q[r] + QK8_0 * k + 16);
        const float scale = float(codes[r][k]);
        for (int t = 0; t < T; ++t) {
          const float e = (dw[r] * xd[t][k]) * scale;
          acc[r][t][0] = vfmaq_n_f32(acc[r][t][0], vcvtq_f32_s32(Dot::dot(w0, xq[t][0])), e);
          acc[r][t][1] = vfmaq_n_f32(acc[r][t][1], vcvtq_f32_s32(Dot::dot(w1, xq[t][1])), e);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const uint8x8_t m8 = vld1_u8(codes[r] + 8);
      const uint16x8_t m16 = vmovl_u8(m8);
      const float32x4_t mins[2] = {vcvtq_f32_u32(vmovl_u16(vget_low_u16(m16))),
                                   vcvtq_f32_u32(vmovl_u16(vget_high_u16(m16)))};
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < 2; ++h) {
          const float32x4_t a = vmulq_n_f32(vld1q_f32(xd[t] + 4 * h), dmin[r]);
          const float32x4_t b = vmulq_f32(mins[h], vld1q_f32(xs[t] + 4 * h));
          acc[r][t][h] = vfmsq_f32(acc[r][t][h], a, b);
        }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
}

// ---- the Ops of the tiling (kernels_neon_shared.h) ------------------------------------------

template <class Dot, class WT>
struct QuantOps {
  using W = typename WT::Block;
  using X = block_q8_0;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    quant_tile<Dot, WT, R, T>(n / WT::kPerBlock, w, x, out);
  }
};

template <class Dot>
struct Q6KOps {
  using W = block_q6_K;
  using X = block_q8_0;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    q6_K_tile<Dot, R, T>(n / QK_K, w, x, out);
  }
};

template <class Dot, class Block, void (*Unpack)(const Block&, int8_t*)>
struct MinTermOps {
  using W = Block;
  using X = block_q8_0;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    min_term_tile<Dot, Block, Unpack, R, T>(n / QK_K, w, x, out);
  }
};

}  // namespace
}  // namespace r1pi

#endif
