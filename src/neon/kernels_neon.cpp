// The NEON backends for 64-bit ARM, in two variants built from the same templates:
//   "neon-dotprod"  Raspberry Pi 5 (Cortex-A76, ARMv8.2 dot product): one sdot per 16 bytes gives
//                   the recipe's four lane sums p_bj directly. Compiled only when the compiler
//                   targets dotprod (__ARM_FEATURE_DOTPROD: -mcpu=cortex-a76 or
//                   -march=armv8.2-a+dotprod); such a binary raises SIGILL on a CPU without it.
//   "neon"          Raspberry Pi 4 (Cortex-A72, plain ARMv8-A): smull/smull2 into 16-bit
//                   products, then pairwise widening adds (saddlp, addp) to the same four sums.
// Both follow the recipe in kernels.h operation for operation, so every result has the scalar
// reference's bytes: the integer lane sums are exact, each lane folds its blocks with one fused
// vfmaq in block order, and reduce8 pairs the eight lanes the same way. The matrix products tile
// rows x tokens, but every output element keeps its own accumulators and block order, so each
// equals the vec_dot of its row and token bit for bit (and so does not depend on B or threads).
// (A NaN result is NaN here whenever it is in the reference, but which NaN payload an operation
// passes on follows the operand order the compiler picks, in the reference too: payloads are not
// part of the recipe.)
// On other machines this file compiles to accessors returning nullptr (expf_r1pi_neon: false).
#include "neon/kernels.h"
#include "neon/kernels_neon.h"
#include "neon/row_tiles.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>
#include <sys/auxv.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "neon/expf_r1pi.h"
#include "ggml/fp16.h"
#include "ggml/quantize.h"

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

// ---- float dot products: R weight rows x T tokens -----------------------------------------

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

// acc[i % 8] = fma(w[i], x[i], acc[i % 8]) for every i, then reduce8: eight elements per step
// into lanes 0..3 and 4..7, the last n % 8 one at a time into the same lanes.
template <class WF, int R, int T>
inline void float_tile(int64_t n, const typename WF::Elem* const* w, const float* const* x,
                       float (*out)[T]) {
  float32x4_t acc[R][T][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = vdupq_n_f32(0.0f);
  const int64_t n8 = n - n % 8;
  for (int64_t i = 0; i < n8; i += 8) {
    float32x4_t xv[T][2];
    for (int t = 0; t < T; ++t) {
      xv[t][0] = vld1q_f32(x[t] + i);
      xv[t][1] = vld1q_f32(x[t] + i + 4);
    }
    for (int r = 0; r < R; ++r) {
      const float32x4_t w0 = WF::load4(w[r] + i);
      const float32x4_t w1 = WF::load4(w[r] + i + 4);
      for (int t = 0; t < T; ++t) {
        acc[r][t][0] = vfmaq_f32(acc[r][t][0], w0, xv[t][0]);
        acc[r][t][1] = vfmaq_f32(acc[r][t][1], w1, xv[t][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      if (n8 == n) {
        out[r][t] = reduce8(acc[r][t][0], acc[r][t][1]);
        continue;
      }
      float a[8];
      vst1q_f32(a, acc[r][t][0]);
      vst1q_f32(a + 4, acc[r][t][1]);
      for (int64_t i = n8; i < n; ++i) a[i % 8] = std::fma(WF::one(w[r] + i), x[t][i], a[i % 8]);
      out[r][t] = reduce8(a);
    }
  }
}

// ---- the typed entry points: vec_dot is the 1 x 1 tile ---------------------------------------

// Each Ops names a weight type's row element W and activation element X, and runs its R x T tile
// over rows of n elements.
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

template <class WF>
struct FloatOps {
  using W = typename WF::Elem;
  using X = float;
  template <int R, int T>
  static void run(int64_t n, const W* const* w, const X* const* x, float (*out)[T]) {
    float_tile<WF, R, T>(n, w, x, out);
  }
};

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

// ---- float kernels -------------------------------------------------------------------------

float vec_dot_f32(int64_t n, const float* a, const float* b) { return vec_dot<FloatOps<F32W>>(n, a, b); }

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
      const float x0 = xh[2 * i];
      const float x1 = xh[2 * i + 1];
      xh[2 * i] = x0 * cos[i] - x1 * sin[i];
      xh[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

void axpy(float* y, float a, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(x + i), a));
  for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

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

template <class Ops>
constexpr TypeKernels entries() {
  return {.vec_dot = vec_dot<Ops>, .matmul = matmul<Ops>};
}

template <class Dot>
constexpr Kernels make_table(const char* name) {
  return Kernels{
      .name = name,
      .quantize_row_q8_0 = quantize_row_q8_0,
      .types = by_type({
          {GgmlType::F32, entries<FloatOps<F32W>>()},
          {GgmlType::F16, entries<FloatOps<F16W>>()},
          {GgmlType::Q4_0, entries<QuantOps<Dot, Q4_0W>>()},
          {GgmlType::Q8_0, entries<QuantOps<Dot, Q8_0W>>()},
          {GgmlType::Q6_K, entries<Q6KOps<Dot>>()},
      }),
      .vec_dot_f32 = vec_dot_f32,
      .rmsnorm = rmsnorm,
      .softmax = softmax,
      .silu_mul = silu_mul,
      .rope = rope,
      .axpy = axpy,
      .weighted_sum_f32 = weighted_sum<F32W>,
      .weighted_sum_f16 = weighted_sum<F16W>,
      .weighted_sum_q8_0 = weighted_sum_q8_0,
  };
}

const Kernels kNeon = make_table<PlainDot>("neon");
#if defined(__ARM_FEATURE_DOTPROD)
const Kernels kNeonDotprod = make_table<SdotDot>("neon-dotprod");

// A dotprod build (the whole program is compiled for the Cortex-A76) dies of SIGILL on a CPU
// without the extension, such as a Pi 4's Cortex-A72. Say so at start-up instead.
[[maybe_unused]] const bool kCpuHasDotprod = [] {
  if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) return true;
  std::fputs("error: this r1pi was built for ARM's dot-product extension (-mcpu=cortex-a76 or "
             "-march=armv8.2-a+dotprod: Raspberry Pi 5), which this CPU lacks; build it with "
             "-mcpu=cortex-a72 (Raspberry Pi 4) or -march=armv8-a\n",
             stderr);
  std::_Exit(1);
}();
#endif

}  // namespace

const Kernels* kernels_neon() { return &kNeon; }

bool expf_r1pi_neon(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp4(vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] = expf_r1pi(x[i]);
  return true;
}

const Kernels* kernels_neon_dotprod() {
#if defined(__ARM_FEATURE_DOTPROD)
  return &kNeonDotprod;
#else
  return nullptr;
#endif
}

}  // namespace r1pi

#else  // not 64-bit ARM with NEON

namespace r1pi {
const Kernels* kernels_neon() { return nullptr; }
const Kernels* kernels_neon_dotprod() { return nullptr; }
bool expf_r1pi_neon(const float*, float*, int64_t) { return false; }
}  // namespace r1pi

#endif
