// The quantised products of the NEON backends, templates over the four lane sums of 16 int8
// products: PlainDot (smull, pairwise widening adds: "neon") or SdotDot (one sdot: "neon-dotprod").
// This file: the 32-element block types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4), a decoder per type
// and one R weight rows x T tokens tile of the recipe (kernels.h), with its Ops for the tiling of
// kernels_neon_shared.h; the types of 256-element super-blocks are kernels_neon_super_block.h's.
// Included through kernels_neon_table.h only, which builds each for both lane sums.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <algorithm>

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

// A block's 32 nibbles (0..15): element i < 16 the low nibble of qs[i], element 16 + i its high one.
inline void nibbles(const uint8_t* qs, uint8x16_t& lo, uint8x16_t& hi) {
  const uint8x16_t v = vld1q_u8(qs);
  lo = vandq_u8(v, vdupq_n_u8(0x0F));
  hi = vshrq_n_u8(v, 4);
}

// Q5_0's and Q5_1's five-bit values (0..31): the nibbles, element j's fifth bit bit j of qh (a byte
// of qh per eight elements, tested bit by bit).
inline void five_bits(const uint8_t* qh, const uint8_t* qs, uint8x16_t& lo, uint8x16_t& hi) {
  nibbles(qs, lo, hi);
  const uint8x16_t bits = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
  const uint8x16_t sixteen = vdupq_n_u8(0x10);
  lo = vorrq_u8(lo, vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1])), bits), sixteen));
  hi = vorrq_u8(hi, vandq_u8(vtstq_u8(vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3])), bits), sixteen));
}

// The 32 levels of IQ4_NL, IQ4_XS and MXFP4: each nibble looked up in the type's sixteen (one
// lookup per sixteen).
inline void nibble_levels(const int8_t* levels16, const uint8_t* qs, int8x16_t& w0, int8x16_t& w1) {
  uint8x16_t lo, hi;
  nibbles(qs, lo, hi);
  const int8x16_t levels = vld1q_s8(levels16);
  w0 = vqtbl1q_s8(levels, lo);
  w1 = vqtbl1q_s8(levels, hi);
}
inline void iq4_levels(const uint8_t* qs, int8x16_t& w0, int8x16_t& w1) { nibble_levels(kvalues_iq4nl, qs, w0, w1); }

// A block's scale: the fp16 d of most types, MXFP4's 2^(e - 128).
template <class Block>
inline float block_scale(const Block& b) { return h2f(b.d); }
inline float block_scale(const block_mxfp4& b) { return e8m0_to_fp32_half(b.e); }

// Each decoder gives a block's 32 integer weights (elements 0..15 and 16..31); the block has an
// fp16 scale d, and with kMin an fp16 min m (x = d * q + m, q unsigned: as int8 the products are
// the same).
struct Q8_0W {
  using Block = block_q8_0;
  static constexpr bool kMin = false;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    w0 = vld1q_s8(b.qs);
    w1 = vld1q_s8(b.qs + 16);
  }
};

// Q4_0: the nibbles minus 8.
struct Q4_0W {
  using Block = block_q4_0;
  static constexpr bool kMin = false;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    uint8x16_t lo, hi;
    nibbles(b.qs, lo, hi);
    w0 = vsubq_s8(vreinterpretq_s8_u8(lo), vdupq_n_s8(8));
    w1 = vsubq_s8(vreinterpretq_s8_u8(hi), vdupq_n_s8(8));
  }
};

// Q4_1: the nibbles as they are.
struct Q4_1W {
  using Block = block_q4_1;
  static constexpr bool kMin = true;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    uint8x16_t lo, hi;
    nibbles(b.qs, lo, hi);
    w0 = vreinterpretq_s8_u8(lo);
    w1 = vreinterpretq_s8_u8(hi);
  }
};

// Q5_0: the five-bit values minus 16.
struct Q5_0W {
  using Block = block_q5_0;
  static constexpr bool kMin = false;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    uint8x16_t lo, hi;
    five_bits(b.qh, b.qs, lo, hi);
    w0 = vsubq_s8(vreinterpretq_s8_u8(lo), vdupq_n_s8(16));
    w1 = vsubq_s8(vreinterpretq_s8_u8(hi), vdupq_n_s8(16));
  }
};

// Q5_1: the five-bit values as they are.
struct Q5_1W {
  using Block = block_q5_1;
  static constexpr bool kMin = true;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) {
    uint8x16_t lo, hi;
    five_bits(b.qh, b.qs, lo, hi);
    w0 = vreinterpretq_s8_u8(lo);
    w1 = vreinterpretq_s8_u8(hi);
  }
};

struct Iq4NlW {
  using Block = block_iq4_nl;
  static constexpr bool kMin = false;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) { iq4_levels(b.qs, w0, w1); }
};

struct Mxfp4W {
  using Block = block_mxfp4;
  static constexpr bool kMin = false;
  static void decode(const Block& b, int8x16_t& w0, int8x16_t& w1) { nibble_levels(kvalues_mxfp4, b.qs, w0, w1); }
};

// ---- quantised dot products of 32-element blocks: R weight rows x T tokens --------------------

// out[r][t] = the recipe's dot of row w[r] with token x[t], over nb 32-element blocks. Each (r, t)
// has its own eight lanes (acc[r][t][0] = lanes 0..3, [1] = lanes 4..7), updated once per block
// in block order: exactly the scalar chain. A type with a min (Q4_1, Q5_1) takes the blocks eight
// at a time, the recipe's super-block: after the group's q part, lane s takes block s's min part,
// fma(m * x.d, the sum of x's quants, acc) (the row's last group may hold fewer blocks, and its
// other lanes keep their value, selected bit for bit).
template <class Dot, class WT, int R, int T>
inline void quant_tile(int64_t nb, const typename WT::Block* const* w, const block_q8_0* const* x,
                       float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  // Types without a min take the row as one group (the loop the compiler sees for them).
  const int64_t group = WT::kMin ? 8 : nb;
  for (int64_t g = 0; g < nb; g += group) {
    const int64_t count = std::min(group, nb - g);
    // The min part's factors and sums of the group's blocks (lane k: block g + k; 0 past count).
    alignas(16) float wm[R][8] = {}, xdg[T][8] = {};
    alignas(16) int32_t xsum[T][8] = {};
    for (int64_t k = 0; k < count; ++k) {
      const int64_t i = g + k;
      int8x16_t xq[T][2];
      float xd[T];
      for (int t = 0; t < T; ++t) {
        xq[t][0] = vld1q_s8(x[t][i].qs);
        xq[t][1] = vld1q_s8(x[t][i].qs + 16);
        xd[t] = h2f(x[t][i].d);
        if constexpr (WT::kMin) {
          xdg[t][k] = xd[t];
          xsum[t][k] = int32_t(vaddlvq_s8(xq[t][0])) + int32_t(vaddlvq_s8(xq[t][1]));
        }
      }
      for (int r = 0; r < R; ++r) {
        int8x16_t w0, w1;
        WT::decode(w[r][i], w0, w1);
        const float wd = block_scale(w[r][i]);
        if constexpr (WT::kMin) wm[r][k] = h2f(w[r][i].m);
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
    if constexpr (WT::kMin) {
      const uint32x4_t lane = {0, 1, 2, 3};
      for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t)
          for (int h = 0; h < 2; ++h) {
            const float32x4_t a = vmulq_f32(vld1q_f32(wm[r] + 4 * h), vld1q_f32(xdg[t] + 4 * h));
            const float32x4_t sum = vfmaq_f32(acc[r][t][h], a, vcvtq_f32_s32(vld1q_s32(xsum[t] + 4 * h)));
            const uint32x4_t in_group = vcltq_u32(vaddq_u32(lane, vdupq_n_u32(4 * h)), vdupq_n_u32(uint32_t(count)));
            acc[r][t][h] = vbslq_f32(in_group, sum, acc[r][t][h]);
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
    quant_tile<Dot, WT, R, T>(n / QK8_0, w, x, out);
  }
};

}  // namespace
}  // namespace r1pi

#endif
