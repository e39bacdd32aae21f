// Attention's weighted sums of value rows in the NEON backends (F32, F16 and Q8_0 values; recipe
// in kernels.h). Included through kernels_neon_table.h only.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <cmath>

#include "ggml/quant_blocks.h"
#include "neon/kernels_neon_shared.h"
#include "neon/row_tiles.h"

namespace r1pi {
namespace {

// Attention's weighted sums: R (up to 4) rows x 4 vectors of four elements in registers over a
// block of positions, each value vector loaded once for the R rows; the last n % 4 elements one
// at a time.
template <class WF, int R>
void weighted_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1) {
  const float* p = a.p + r0 * a.p_stride;
  int64_t i = 0;
  for (; i + 16 <= a.n; i += 16) {
    float32x4_t acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < 4; ++w) acc[r][w] = vld1q_f32(a.out + (r0 + r) * a.out_stride + i + 4 * w);
    for (int64_t t = t0; t < t1; ++t) {
      const typename WF::Elem* row = reinterpret_cast<const typename WF::Elem*>(a.v + size_t(t) * a.v_row_bytes) + i;
      float32x4_t v[4];
      for (int w = 0; w < 4; ++w) v[w] = WF::load4(row + 4 * w);
      for (int r = 0; r < R; ++r) {
        const float32x4_t pr = vdupq_n_f32(p[r * a.p_stride + t]);
        for (int w = 0; w < 4; ++w) acc[r][w] = vfmaq_f32(acc[r][w], pr, v[w]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < 4; ++w) vst1q_f32(a.out + (r0 + r) * a.out_stride + i + 4 * w, acc[r][w]);
  }
  for (; i + 4 <= a.n; i += 4)
    for (int r = 0; r < R; ++r) {
      float* o = a.out + (r0 + r) * a.out_stride + i;
      float32x4_t acc = vld1q_f32(o);
      for (int64_t t = t0; t < t1; ++t)
        acc = vfmaq_f32(acc, vdupq_n_f32(p[r * a.p_stride + t]),
                        WF::load4(reinterpret_cast<const typename WF::Elem*>(a.v + size_t(t) * a.v_row_bytes) + i));
      vst1q_f32(o, acc);
    }
  for (; i < a.n; ++i)
    for (int r = 0; r < R; ++r) {
      float& o = a.out[(r0 + r) * a.out_stride + i];
      for (int64_t t = t0; t < t1; ++t)
        o = std::fma(p[r * a.p_stride + t],
                     WF::one(reinterpret_cast<const typename WF::Elem*>(a.v + size_t(t) * a.v_row_bytes) + i), o);
    }
}

// Positions in blocks of 32, so that a block's value rows stay in L1 while the row tiles and
// columns pass over them. rows.template operator()<R>(r0, t0, t1) does R rows from r0 over
// positions [t0, t1).
template <class Rows>
void weighted_blocks(const WeightedSumArgs& a, Rows&& rows) {
  for (int64_t t0 = 0; t0 < a.T; t0 += 32) {
    const int64_t t1 = a.T < t0 + 32 ? a.T : t0 + 32;
    for_row_tiles(a.R, rows, t0, t1);
  }
}

template <class WF>
void weighted_sum(const WeightedSumArgs& a) {
  weighted_blocks(a, [&]<int R>(int r, int64_t t0, int64_t t1) { weighted_rows<WF, R>(a, r, t0, t1); });
}

// Q8_0 value rows: R rows x 16 elements (half a block, 4 vectors) per tile; pd = p_t * d once per
// row and block, as the reference.
template <int R>
void weighted_q8_0_rows(const WeightedSumArgs& a, int r0, int64_t t0, int64_t t1) {
  const float* p = a.p + r0 * a.p_stride;
  for (int64_t i = 0; i < a.n; i += 16) {
    const int64_t blk = i / QK8_0, in_blk = i % QK8_0;
    float32x4_t acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < 4; ++w) acc[r][w] = vld1q_f32(a.out + (r0 + r) * a.out_stride + i + 4 * w);
    for (int64_t t = t0; t < t1; ++t) {
      const block_q8_0& b = reinterpret_cast<const block_q8_0*>(a.v + size_t(t) * a.v_row_bytes)[blk];
      const float d = h2f(b.d);
      const int8x16_t q = vld1q_s8(b.qs + in_blk);
      const int16x8_t lo = vmovl_s8(vget_low_s8(q)), hi = vmovl_s8(vget_high_s8(q));
      const float32x4_t v[4] = {vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))),
                                vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo))),
                                vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))),
                                vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)))};
      for (int r = 0; r < R; ++r) {
        const float32x4_t pd = vdupq_n_f32(p[r * a.p_stride + t] * d);
        for (int w = 0; w < 4; ++w) acc[r][w] = vfmaq_f32(acc[r][w], pd, v[w]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < 4; ++w) vst1q_f32(a.out + (r0 + r) * a.out_stride + i + 4 * w, acc[r][w]);
  }
}

void weighted_sum_q8_0(const WeightedSumArgs& a) {
  weighted_blocks(a, [&]<int R>(int r, int64_t t0, int64_t t1) { weighted_q8_0_rows<R>(a, r, t0, t1); });
}

}  // namespace
}  // namespace r1pi

#endif
