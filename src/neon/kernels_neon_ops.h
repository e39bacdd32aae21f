// The NEON backends' Q8_0 activation quantiser and ops on floats: rmsnorm, softmax, silu_mul, rope,
// axpy, and exp4 (r1pi's exp on four lanes, for softmax, silu_mul and expf_r1pi_neon). Included through
// kernels_neon_table.h only.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <cfloat>
#include <cmath>

#include "ggml/fp16.h"
#include "neon/expf_r1pi.h"
#include "neon/kernels_neon_float.h"
#include "neon/kernels_neon_shared.h"
#include "neon/rope_pair.h"

namespace r1pi {
namespace {

// ---- Q8_0 activation quantiser -----------------------------------------------------------

void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    const float* xb = x + b * QK8_0;
    float32x4_t v[8];
    for (int k = 0; k < 8; ++k) v[k] = vld1q_f32(xb + 4 * k);
    // max |x|: maxnm skips a NaN against a number, as the reference's std::max(amax, |x|) does;
    // the accumulator starts at 0 and so is never NaN.
    float32x4_t amax4 = vdupq_n_f32(0.0f);
    for (int k = 0; k < 8; ++k) amax4 = vmaxnmq_f32(amax4, vabsq_f32(v[k]));
    const float amax = vmaxnmvq_f32(amax4);
    const float d = amax / 127.0f;
    const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    // fcvtns rounds to nearest even like round_even (|x * id| <= 127.00003); a NaN gives 0, as
    // the reference's int8 conversion of a NaN does.
    int16x8_t h[4];
    for (int k = 0; k < 4; ++k) {
      const int32x4_t q0 = vcvtnq_s32_f32(vmulq_n_f32(v[2 * k], id));
      const int32x4_t q1 = vcvtnq_s32_f32(vmulq_n_f32(v[2 * k + 1], id));
      h[k] = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1));
    }
    vst1q_s8(y[b].qs, vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1])));
    vst1q_s8(y[b].qs + 16, vcombine_s8(vmovn_s16(h[2]), vmovn_s16(h[3])));
  }
  // The reference ignores a partial last block; so do we.
}


// ---- float ops -----------------------------------------------------------------------------

// round_even as the scalar code does it: (v + 1.5 * 2^23) - 1.5 * 2^23, two IEEE additions.
inline float32x4_t round_even4(float32x4_t v) {
  const float32x4_t shifter = vdupq_n_f32(12582912.0f);
  return vsubq_f32(vaddq_f32(v, shifter), shifter);
}

// expf_r1pi on four lanes: the same float operations (expf_r1pi.h), the out-of-range and NaN
// lanes replaced at the end.
inline float32x4_t exp4(float32x4_t x) {
  const float32x4_t n = round_even4(vmulq_n_f32(x, kLog2e));
  float32x4_t r = vfmaq_f32(x, n, vdupq_n_f32(-kLn2Hi));
  r = vfmaq_f32(r, n, vdupq_n_f32(-kLn2Lo));
  float32x4_t p = vdupq_n_f32(kExpPoly[7]);
  for (int k = 6; k >= 0; --k) p = vfmaq_f32(vdupq_n_f32(kExpPoly[k]), p, r);
  // n is integral: the conversion is exact (out-of-range lanes are discarded below).
  const int32x4_t e = vshlq_n_s32(vcvtq_s32_f32(n), 23);
  float32x4_t y = vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(p), e));
  y = vbslq_f32(vcltq_f32(x, vdupq_n_f32(kExpMin)), vdupq_n_f32(0.0f), y);
  y = vbslq_f32(vcgtq_f32(x, vdupq_n_f32(kExpMax)), vdupq_n_f32(INFINITY), y);
  y = vbslq_f32(vceqq_f32(x, x), y, x);  // NaN lanes: x itself
  return y;
}

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  const float ss = vec_dot_f32(n, x, x);
  const float scale = 1.0f / std::sqrt(ss / float(n) + eps);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    vst1q_f32(out + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), scale), vld1q_f32(w + i)));
  for (; i < n; ++i) out[i] = (x[i] * scale) * w[i];
}

void softmax(float* x, int64_t n) {
  // m = max x, as the scalar scan m = x[i] > m ? x[i] : m from m = x[0] gives it: NaN when x[0]
  // is NaN, else the largest non-NaN value. Every lane starts from x[0], so no lane is ever NaN
  // and NaNs further on are skipped as in the scan. Only the sign of a zero maximum may differ,
  // and that changes no output: x - (+0) and x - (-0) differ only for x = +-0, where exp gives 1.
  float m = x[0];
  int64_t i = 0;
  if (m == m) {
    float32x4_t m4 = vdupq_n_f32(m);
    for (; i + 4 <= n; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      m4 = vbslq_f32(vcgtq_f32(v, m4), v, m4);
    }
    float lanes[4];
    vst1q_f32(lanes, m4);
    for (int k = 0; k < 4; ++k) m = lanes[k] > m ? lanes[k] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  }

  // x[i] = exp(x[i] - m); acc[i % 8] += x[i]; lanes 0..3 and 4..7 as vectors.
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  const float32x4_t mv = vdupq_n_f32(m);
  const int64_t n8 = n - n % 8;
  for (i = 0; i < n8; i += 8) {
    const float32x4_t e0 = exp4(vsubq_f32(vld1q_f32(x + i), mv));
    const float32x4_t e1 = exp4(vsubq_f32(vld1q_f32(x + i + 4), mv));
    vst1q_f32(x + i, e0);
    vst1q_f32(x + i + 4, e1);
    acc0 = vaddq_f32(acc0, e0);
    acc1 = vaddq_f32(acc1, e1);
  }
  float acc[8];
  vst1q_f32(acc, acc0);
  vst1q_f32(acc + 4, acc1);
  for (; i < n; ++i) {
    x[i] = expf_r1pi(x[i] - m);
    acc[i % 8] += x[i];
  }
  const float inv = 1.0f / reduce8(acc);
  for (i = 0; i + 4 <= n; i += 4) vst1q_f32(x + i, vmulq_n_f32(vld1q_f32(x + i), inv));
  for (; i < n; ++i) x[i] = x[i] * inv;
}

void silu_mul(float* g, const float* u, int64_t n) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t gv = vld1q_f32(g + i);
    const float32x4_t e = exp4(vnegq_f32(gv));
    vst1q_f32(g + i, vmulq_f32(vdivq_f32(gv, vaddq_f32(one, e)), vld1q_f32(u + i)));
  }
  for (; i < n; ++i) g[i] = (g[i] / (1.0f + expf_r1pi(-g[i]))) * u[i];
}

void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    int64_t i = 0;
    for (; i + 4 <= half; i += 4) {
      const float32x4x2_t v = vld2q_f32(xh + 2 * i);  // val[0] = x[2i..], val[1] = x[2i+1..]
      const float32x4_t c = vld1q_f32(cos + i);
      const float32x4_t s = vld1q_f32(sin + i);
      float32x4x2_t o;
      o.val[0] = vsubq_f32(vmulq_f32(v.val[0], c), vmulq_f32(v.val[1], s));
      o.val[1] = vaddq_f32(vmulq_f32(v.val[0], s), vmulq_f32(v.val[1], c));
      vst2q_f32(xh + 2 * i, o);
    }
    for (; i < half; ++i) {
      rotate_pair(xh[2 * i], xh[2 * i + 1], cos[i], sin[i]);
    }
  }
}

void rope_neox(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* a = x + h * head_dim;
    float* b = a + half;
    int64_t i = 0;
    for (; i + 4 <= half; i += 4) {
      const float32x4_t x0 = vld1q_f32(a + i), x1 = vld1q_f32(b + i);
      const float32x4_t c = vld1q_f32(cos + i), s = vld1q_f32(sin + i);
      vst1q_f32(a + i, vsubq_f32(vmulq_f32(x0, c), vmulq_f32(x1, s)));
      vst1q_f32(b + i, vaddq_f32(vmulq_f32(x0, s), vmulq_f32(x1, c)));
    }
    for (; i < half; ++i) {
      rotate_pair(a[i], b[i], cos[i], sin[i]);
    }
  }
}

void axpy(float* y, float a, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(x + i), a));
  for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

}  // namespace
}  // namespace r1pi

#endif
