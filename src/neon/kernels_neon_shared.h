// What every part of the NEON backends shares (kernels_neon.cpp says what the two backends are and
// the rules they follow): small vector helpers, the float row elements, and the R weight rows x
// T tokens tiling of every matrix product. Like the other kernels_neon_*.h, included through
// kernels_neon_table.h only: each backend's table and everything it points at are one translation
// unit (kernels_neon.cpp, kernels_neon_dotprod.cpp), split into files by concern. On other
// machines it is empty.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cstdint>

#include "neon/kernels.h"

namespace r1pi {
namespace {

// ---- shared helpers ------------------------------------------------------------------------

// Half to float with the hardware conversion (fcvtl): exact, as fp16_to_fp32 (a NaN stays NaN).
inline float h2f(uint16_t h) {
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

inline float32x4_t load_f16x4(const uint16_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

// reduce8 of lanes lo = a0..a3, hi = a4..a7:
//   s = (a0+a4, a1+a5, a2+a6, a3+a7); u = (s0+s2, s1+s3); u0 + u1
// = ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
inline float reduce8(float32x4_t lo, float32x4_t hi) {
  const float32x4_t s = vaddq_f32(lo, hi);
  const float32x2_t u = vadd_f32(vget_low_f32(s), vget_high_f32(s));
  return vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
}

inline float reduce8(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}


// ---- float row elements (the float products' weights, attention's value rows) -------------

struct F32W {
  using Elem = float;
  static float32x4_t load4(const float* p) { return vld1q_f32(p); }
  static float one(const float* p) { return *p; }
};

struct F16W {
  using Elem = uint16_t;
  static float32x4_t load4(const uint16_t* p) { return load_f16x4(p); }
  static float one(const uint16_t* p) { return h2f(*p); }
};

// ---- the typed entry points: vec_dot is the 1 x 1 tile ---------------------------------------

// Each Ops (kernels_neon_quant.h, kernels_neon_float.h) names a weight type's row element W and
// activation element X, and runs its R x T tile over rows of n elements.
template <class Ops>
float vec_dot(int64_t n, const void* w, const void* x) {
  const typename Ops::W* wr = static_cast<const typename Ops::W*>(w);
  const typename Ops::X* xr = static_cast<const typename Ops::X*>(x);
  float out[1][1];
  Ops::template run<1, 1>(n, &wr, &xr, out);
  return out[0][0];
}

// Rows r, r + stride, .. (R of them) times tokens b .. b + T - 1 into a.out.
template <class Ops, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t stride, int b) {
  const typename Ops::W* w[R];
  const typename Ops::X* x[T];
  for (int i = 0; i < R; ++i)
    w[i] = reinterpret_cast<const typename Ops::W*>(a.w + (r + i * stride) * a.w_row_bytes);
  for (int t = 0; t < T; ++t)
    x[t] = reinterpret_cast<const typename Ops::X*>(a.x + size_t(b + t) * a.x_row_bytes);
  float out[R][T];
  Ops::template run<R, T>(a.n, w, x, out);
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < T; ++t) a.out[(b + t) * a.out_stride + r + i * stride] = out[i][t];
}

// Rows [r0, r1) for T tokens starting at b, RB rows at a time as RB streams: the rows are cut
// into RB equal parts and tile i takes row i of each part, so that each stream reads consecutive
// rows (a long sequential run that the hardware prefetchers follow; RB adjacent rows would be RB
// short ones). The remainder rows go one by one. No row's result depends on its tile.
template <class Ops, int RB, int T>
void rows_for_tokens(const MatmulArgs& a, int b) {
  const int64_t q = (a.r1 - a.r0) / RB;
  for (int64_t r = a.r0; r < a.r0 + q; ++r) tile<Ops, RB, T>(a, r, q, b);
  for (int64_t r = a.r0 + q * RB; r < a.r1; ++r) tile<Ops, 1, T>(a, r, 1, b);
}

// The tiling: one token (decode) takes four rows at a time, so four independent fma chains hide
// the latency; a batch takes four tokens x two rows, reading each weight block once per four
// tokens. The remainder tokens take smaller tiles. Every tile computes each element exactly as
// vec_dot does.
template <class Ops>
void matmul(const MatmulArgs& a) {
  if (a.B == 1) {
    rows_for_tokens<Ops, 4, 1>(a, 0);
    return;
  }
  int b = 0;
  for (; b + 4 <= a.B; b += 4) rows_for_tokens<Ops, 2, 4>(a, b);
  switch (a.B - b) {
    case 3: rows_for_tokens<Ops, 2, 3>(a, b); break;
    case 2: rows_for_tokens<Ops, 2, 2>(a, b); break;
    case 1: rows_for_tokens<Ops, 4, 1>(a, b); break;
    default: break;
  }
}


template <class Ops>
constexpr TypeKernels entries() {
  return {.vec_dot = vec_dot<Ops>, .matmul = matmul<Ops>};
}


}  // namespace
}  // namespace r1pi

#endif
