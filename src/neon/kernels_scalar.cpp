// The scalar reference backend: the definition of every kernel result (recipe in kernels.h).
// Plain loops, one float operation at a time; std::fma exactly where the recipe says.
#include <algorithm>
#include <cmath>

#include "ggml/fp16.h"
#include "neon/kernels.h"
#include "ggml/bf16.h"
#include "ggml/legacy_layout.h"
#include "ggml/q23_K_layout.h"
#include "ggml/q4_K_layout.h"
#include "ggml/q6_K_layout.h"
#include "ggml/quantize.h"
#include "neon/rope_pair.h"

namespace r1pi {

namespace {

// The fixed pairing every backend uses to fold its eight partial sums.
float reduce8(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// One 32-element block of a quantised dot product: lane j gets the exact integer sum over the
// block's elements 4j .. 4j+3, scaled by d_b in one fma. w holds the block's integer weights.
void accumulate_block(float* acc, float d, const int8_t* w, const int8_t* x) {
  for (int j = 0; j < 8; ++j) {
    int32_t p = 0;
    for (int k = 4 * j; k < 4 * j + 4; ++k) p += w[k] * x[k];
    acc[j] = std::fma(d, float(p), acc[j]);
  }
}

// The 32 signed integer weights of a Q4_0, Q5_0, IQ4_NL or MXFP4 block.
void weights_q4_0(const block_q4_0& b, int8_t* q) {
  uint8_t u[QK4_0];
  unpack_nibbles(b.qs, u);
  for (int i = 0; i < QK4_0; ++i) q[i] = int8_t(u[i] - 8);
}
void weights_q5_0(const block_q5_0& b, int8_t* q) {
  uint8_t u[QK4_0];
  unpack_5bit(b.qh, b.qs, u);
  for (int i = 0; i < QK4_0; ++i) q[i] = int8_t(u[i] - 16);
}
void weights_iq4_nl(const block_iq4_nl& b, int8_t* q) {
  uint8_t u[QK4_0];
  unpack_nibbles(b.qs, u);
  for (int i = 0; i < QK4_0; ++i) q[i] = kvalues_iq4nl[u[i]];
}

void weights_mxfp4(const block_mxfp4& b, int8_t* q) {
  uint8_t u[QK4_0];
  unpack_nibbles(b.qs, u);
  for (int i = 0; i < QK4_0; ++i) q[i] = kvalues_mxfp4[u[i]];
}

// A block's scale as a float: the fp16 d of most types, MXFP4's 2^(e - 128).
template <typename Block>
float block_scale(const Block& b) { return fp16_to_fp32(b.d); }
template <>
float block_scale(const block_mxfp4& b) { return e8m0_to_fp32_half(b.e); }

// A 32-element type with one scale and signed integer weights: each block's weights, then
// accumulate_block with d * x.d.
template <typename Block, void (*Weights)(const Block&, int8_t*)>
float vec_dot_signed_q8_0(int64_t n, const Block* w, const block_q8_0* x) {
  float acc[8] = {};
  int8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    Weights(w[b], q);
    accumulate_block(acc, block_scale(w[b]) * fp16_to_fp32(x[b].d), q, x[b].qs);
  }
  return reduce8(acc);
}

float vec_dot_q8_0_q8_0(int64_t n, const block_q8_0* w, const block_q8_0* x) {
  float acc[8] = {};
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    accumulate_block(acc, fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d), w[b].qs, x[b].qs);
  }
  return reduce8(acc);
}

// IQ4_XS: per 32-element block the levels as IQ4_NL's, the block's scale in its factor
// ((d * x.d) * (scale - 32), as the q part of Q4_K), no min term.
float vec_dot_iq4_xs_q8_0(int64_t n, const block_iq4_xs* w, const block_q8_0* x) {
  float acc[8] = {};
  uint8_t u[QK4_0];
  int8_t q[QK4_0];
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    const float dw = fp16_to_fp32(w[sb].d);
    for (int b = 0; b < QK_K / QK4_0; ++b) {
      const block_q8_0& xb = x[sb * (QK_K / QK4_0) + b];
      unpack_nibbles(w[sb].qs + 16 * b, u);
      for (int i = 0; i < QK4_0; ++i) q[i] = kvalues_iq4nl[u[i]];
      accumulate_block(acc, (dw * fp16_to_fp32(xb.d)) * float(iq4_xs_scale(w[sb], b) - 32), q, xb.qs);
    }
  }
  return reduce8(acc);
}

// Q4_1 and Q5_1 (x = d * q + m): the q part block by block with unsigned q, then after each group
// of eight blocks (fewer at the row's end) lane s takes block s's min part,
// (m * x.d) * (the exact sum of x's quants), in one fma (kernels.h).
template <typename Block, void (*Unpack)(const Block&, uint8_t*)>
float vec_dot_min32_q8_0(int64_t n, const Block* w, const block_q8_0* x) {
  float acc[8] = {};
  uint8_t q[QK4_0];
  const int64_t blocks = n / QK4_0;
  for (int64_t g = 0; g < blocks; g += 8) {
    const int64_t end = std::min<int64_t>(blocks, g + 8);
    for (int64_t b = g; b < end; ++b) {
      Unpack(w[b], q);
      const float d = fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d);
      for (int j = 0; j < 8; ++j) {
        int32_t p = 0;
        for (int i = 4 * j; i < 4 * j + 4; ++i) p += q[i] * x[b].qs[i];
        acc[j] = std::fma(d, float(p), acc[j]);
      }
    }
    for (int64_t b = g; b < end; ++b) {
      int32_t xsum = 0;
      for (int i = 0; i < QK4_0; ++i) xsum += x[b].qs[i];
      acc[b - g] = std::fma(fp16_to_fp32(w[b].m) * fp16_to_fp32(x[b].d), float(xsum), acc[b - g]);
    }
  }
  return reduce8(acc);
}

void unpack_q4_1(const block_q4_1& b, uint8_t* q) { unpack_nibbles(b.qs, q); }
void unpack_q5_1(const block_q5_1& b, uint8_t* q) { unpack_5bit(b.qh, b.qs, q); }


// The q part of a super-block of 16-element sub-blocks (Q6_K, Q3_K, Q2_K; q its 256 integer
// values): the super-block spans 8 Q8_0 blocks, and a lane's four elements share one sub-block,
// so its sum is that sub-block's scale times the four integer products, then fma(d * x.d, p).
template <typename Q, typename Scale>
void accumulate_sixteens(float* acc, const Q* q, Scale scale, float dw, const block_q8_0* x) {
  for (int k = 0; k < QK_K / QK8_0; ++k) {
    const float d = dw * fp16_to_fp32(x[k].d);
    for (int j = 0; j < 8; ++j) {
      int32_t p = 0;
      for (int i = 4 * j; i < 4 * j + 4; ++i) p += q[QK8_0 * k + i] * x[k].qs[i];
      acc[j] = std::fma(d, float(p * scale((QK8_0 * k + 4 * j) / 16)), acc[j]);
    }
  }
}

// Q6_K and Q3_K: the q part alone, sub-block s of block b scaled by scale(b, s).
template <typename Block, typename Unpack, typename Scale>
float vec_dot_sixteens(int64_t n, const Block* w, const block_q8_0* x, Unpack unpack, Scale scale) {
  float acc[8] = {};
  int8_t q[QK_K];
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    unpack(w[sb], q);
    accumulate_sixteens(acc, q, [&](int s) { return scale(w[sb], s); }, fp16_to_fp32(w[sb].d),
                        x + sb * (QK_K / QK8_0));
  }
  return reduce8(acc);
}

float vec_dot_q6_K_q8_0(int64_t n, const block_q6_K* w, const block_q8_0* x) {
  return vec_dot_sixteens(n, w, x, unpack_q6_K, [](const block_q6_K& b, int s) { return int(b.scales[s]); });
}

// Q3_K: the scale of sub-block s is its code - 32.
float vec_dot_q3_K_q8_0(int64_t n, const block_q3_K* w, const block_q8_0* x) {
  return vec_dot_sixteens(n, w, x, unpack_q3_K,
                          [](const block_q3_K& b, int s) { return q3_K_scale_code(b.scales, s) - 32; });
}

// Q2_K: the q part with the 4-bit scale, then lane k takes block k's min part over its two
// 16-element sub-blocks (kernels.h).
float vec_dot_q2_K_q8_0(int64_t n, const block_q2_K* w, const block_q8_0* x) {
  float acc[8] = {};
  uint8_t q[QK_K];
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    unpack_q2_K(w[sb], q);
    const block_q8_0* xs = x + sb * (QK_K / QK8_0);
    accumulate_sixteens(acc, q, [&](int s) { return w[sb].scales[s] & 0xF; }, fp16_to_fp32(w[sb].d), xs);
    const float dminw = fp16_to_fp32(w[sb].dmin);
    for (int k = 0; k < QK_K / QK8_0; ++k) {
      int32_t lo = 0, hi = 0;
      for (int i = 0; i < 16; ++i) lo += xs[k].qs[i], hi += xs[k].qs[16 + i];
      const int32_t m = (w[sb].scales[2 * k] >> 4) * lo + (w[sb].scales[2 * k + 1] >> 4) * hi;
      acc[k] = std::fma(-(dminw * fp16_to_fp32(xs[k].d)), float(m), acc[k]);
    }
  }
  return reduce8(acc);
}

// A super-block of a type with a min term (Q4_K, Q5_K; q holds its 256 unsigned values), against
// its 8 Q8_0 blocks (kernels.h): per 32-element sub-block s the q part as eight lanes with the
// scale in the block's factor, ((d * x.d) * scale_s) * (the lane's sum of q * x.q); then lane s
// takes sub-block s's min part, -(dmin * x.d) * (min_s * sum of x.q).
void accumulate_min_super_block(float* acc, uint16_t d, uint16_t dmin, const uint8_t* scales,
                                const uint8_t* q, const block_q8_0* x) {
  const float dw = fp16_to_fp32(d), dminw = fp16_to_fp32(dmin);
  for (int s = 0; s < QK_K / QK8_0; ++s) {
    const block_q8_0& xb = x[s];
    const uint8_t* qs = q + QK8_0 * s;
    const float e = (dw * fp16_to_fp32(xb.d)) * float(k4_scale_min(scales, s).scale);
    for (int j = 0; j < 8; ++j) {
      int32_t t = 0;
      for (int i = 4 * j; i < 4 * j + 4; ++i) t += qs[i] * xb.qs[i];
      acc[j] = std::fma(e, float(t), acc[j]);
    }
  }
  for (int s = 0; s < QK_K / QK8_0; ++s) {
    int32_t xsum = 0;
    for (int i = 0; i < QK8_0; ++i) xsum += x[s].qs[i];
    acc[s] = std::fma(-(dminw * fp16_to_fp32(x[s].d)), float(k4_scale_min(scales, s).min * xsum), acc[s]);
  }
}

// Q4_K and Q5_K: their values unpacked, then the same super-block arithmetic.
template <typename Block, void (*Unpack)(const Block&, uint8_t*)>
float vec_dot_min_q8_0(int64_t n, const Block* w, const block_q8_0* x) {
  float acc[8] = {};
  uint8_t q[QK_K];
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    Unpack(w[sb], q);
    accumulate_min_super_block(acc, w[sb].d, w[sb].dmin, w[sb].scales, q, x + sb * (QK_K / QK8_0));
  }
  return reduce8(acc);
}

float vec_dot_f16_f32(int64_t n, const uint16_t* w, const float* x) {
  float acc[8] = {};
  for (int64_t i = 0; i < n; ++i) acc[i % 8] = std::fma(fp16_to_fp32(w[i]), x[i], acc[i % 8]);
  return reduce8(acc);
}

float vec_dot_bf16_f32(int64_t n, const uint16_t* w, const float* x) {
  float acc[8] = {};
  for (int64_t i = 0; i < n; ++i) acc[i % 8] = std::fma(bf16_to_fp32(w[i]), x[i], acc[i % 8]);
  return reduce8(acc);
}

float vec_dot_f32(int64_t n, const float* a, const float* b) {
  float acc[8] = {};
  for (int64_t i = 0; i < n; ++i) acc[i % 8] = std::fma(a[i], b[i], acc[i % 8]);
  return reduce8(acc);
}

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  const float ss = vec_dot_f32(n, x, x);
  const float scale = 1.0f / std::sqrt(ss / float(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * w[i];
}

void softmax(float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  float acc[8] = {};
  for (int64_t i = 0; i < n; ++i) {
    x[i] = expf_r1pi(x[i] - m);
    acc[i % 8] += x[i];
  }
  const float inv = 1.0f / reduce8(acc);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * inv;
}

void silu_mul(float* g, const float* u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] = (g[i] / (1.0f + expf_r1pi(-g[i]))) * u[i];
}

void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      rotate_pair(xh[2 * i], xh[2 * i + 1], cos[i], sin[i]);
    }
  }
}

void rope_neox(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      rotate_pair(xh[i], xh[i + half], cos[i], sin[i]);
    }
  }
}

void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

float to_float(float v) { return v; }
float to_float(uint16_t v) { return fp16_to_fp32(v); }

template <typename V>
void weighted_sum(const WeightedSumArgs& a) {
  for (int r = 0; r < a.R; ++r) {
    float* o = a.out + r * a.out_stride;
    for (int64_t t = 0; t < a.T; ++t) {
      const V* v = reinterpret_cast<const V*>(a.v + t * a.v_row_bytes);
      const float p = a.p[r * a.p_stride + t];
      for (int64_t i = 0; i < a.n; ++i) o[i] = std::fma(p, to_float(v[i]), o[i]);
    }
  }
}

void weighted_sum_q8_0(const WeightedSumArgs& a) {
  for (int r = 0; r < a.R; ++r) {
    float* o = a.out + r * a.out_stride;
    for (int64_t t = 0; t < a.T; ++t) {
      const block_q8_0* v = reinterpret_cast<const block_q8_0*>(a.v + t * a.v_row_bytes);
      for (int64_t b = 0; b < a.n / QK8_0; ++b) {
        const float pd = a.p[r * a.p_stride + t] * fp16_to_fp32(v[b].d);
        for (int i = 0; i < QK8_0; ++i)
          o[b * QK8_0 + i] = std::fma(pd, float(v[b].qs[i]), o[b * QK8_0 + i]);
      }
    }
  }
}

// The matrix products as plain loops over the row dot products (the definition of their results).
template <typename W, typename X, float (*Dot)(int64_t, const W*, const X*)>
void matmul_by_rows(const MatmulArgs& a) {
  for (int64_t r = a.r0; r < a.r1; ++r)
    for (int b = 0; b < a.B; ++b)
      a.out[b * a.out_stride + r] =
          Dot(a.n, reinterpret_cast<const W*>(a.w + r * a.w_row_bytes),
              reinterpret_cast<const X*>(a.x + b * a.x_row_bytes));
}

// A typed dot product as a TypeKernels::vec_dot.
template <typename W, typename X, float (*Dot)(int64_t, const W*, const X*)>
float untyped_dot(int64_t n, const void* w, const void* x) {
  return Dot(n, static_cast<const W*>(w), static_cast<const X*>(x));
}

template <typename W, typename X, float (*Dot)(int64_t, const W*, const X*)>
constexpr TypeKernels by_rows() {
  return {.vec_dot = untyped_dot<W, X, Dot>, .matmul = matmul_by_rows<W, X, Dot>};
}

// Every type of kKernelTypes has its entry here (for_every_type): the fallback of every other
// backend (for_type).
constexpr Kernels kScalar = {
    .name = "scalar",
    .quantize_row_q8_0 = quantize_row_q8_0_ref,
    .types = for_every_type({
        {GgmlType::F32, by_rows<float, float, vec_dot_f32>()},
        {GgmlType::F16, by_rows<uint16_t, float, vec_dot_f16_f32>()},
        {GgmlType::Q4_0, by_rows<block_q4_0, block_q8_0, vec_dot_signed_q8_0<block_q4_0, weights_q4_0>>()},
        {GgmlType::Q8_0, by_rows<block_q8_0, block_q8_0, vec_dot_q8_0_q8_0>()},
        {GgmlType::Q6_K, by_rows<block_q6_K, block_q8_0, vec_dot_q6_K_q8_0>()},
        {GgmlType::Q4_K, by_rows<block_q4_K, block_q8_0, vec_dot_min_q8_0<block_q4_K, unpack_q4_K>>()},
        {GgmlType::Q5_K, by_rows<block_q5_K, block_q8_0, vec_dot_min_q8_0<block_q5_K, unpack_q5_K>>()},
        {GgmlType::Q4_1, by_rows<block_q4_1, block_q8_0, vec_dot_min32_q8_0<block_q4_1, unpack_q4_1>>()},
        {GgmlType::Q5_0, by_rows<block_q5_0, block_q8_0, vec_dot_signed_q8_0<block_q5_0, weights_q5_0>>()},
        {GgmlType::Q5_1, by_rows<block_q5_1, block_q8_0, vec_dot_min32_q8_0<block_q5_1, unpack_q5_1>>()},
        {GgmlType::IQ4_NL, by_rows<block_iq4_nl, block_q8_0, vec_dot_signed_q8_0<block_iq4_nl, weights_iq4_nl>>()},
        {GgmlType::IQ4_XS, by_rows<block_iq4_xs, block_q8_0, vec_dot_iq4_xs_q8_0>()},
        {GgmlType::BF16, by_rows<uint16_t, float, vec_dot_bf16_f32>()},
        {GgmlType::Q2_K, by_rows<block_q2_K, block_q8_0, vec_dot_q2_K_q8_0>()},
        {GgmlType::Q3_K, by_rows<block_q3_K, block_q8_0, vec_dot_q3_K_q8_0>()},
        {GgmlType::MXFP4, by_rows<block_mxfp4, block_q8_0, vec_dot_signed_q8_0<block_mxfp4, weights_mxfp4>>()},
    }),
    R1PI_FLOAT_OPS(),
    .weighted_sum_f32 = weighted_sum<float>,
    .weighted_sum_f16 = weighted_sum<uint16_t>,
    .weighted_sum_q8_0 = weighted_sum_q8_0,
};

}  // namespace

const Kernels& kernels_scalar() { return kScalar; }

}  // namespace r1pi
