// The x86 float ops and the Q8_0 activation quantiser, built once with AVX2 + FMA + F16C for every
// x86 backend (kernels_x86.h has the rules for these files): byte for byte the scalar reference's
// results (recipe in kernels.h).
#include "neon/kernels_avx2.h"

#if defined(__x86_64__) || defined(__i386__)

#include <cfloat>
#include <cmath>

#include "neon/expf_r1pi.h"
#include "neon/kernels_x86.h"
#include "neon/rope_pair.h"

namespace r1pi {

namespace {

// exp of eight floats, operation for operation expf_r1pi (expf_r1pi.h), special cases blended in.
inline __m256 exp8(__m256 x) {
  const __m256 shifter = _mm256_set1_ps(12582912.0f);  // round_even's 1.5 * 2^23
  const __m256 n =
      _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), shifter), shifter);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpPoly[7]);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[6]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[5]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[4]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[3]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[2]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[1]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[0]));
  const __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
  __m256 y = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), e));
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(),
                       _mm256_cmp_ps(x, _mm256_set1_ps(kExpMin), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY),
                       _mm256_cmp_ps(x, _mm256_set1_ps(kExpMax), _CMP_GT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = exp8(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

// The recipe's float dot of a weight row (F32, F16 or BF16) with x: acc[i % 8] = fma(w[i], x[i],
// acc[i % 8]); the last n % 8 elements update only their own lanes.
template <FloatRow K>
float float_dot(int64_t n, const uint8_t* w, const float* x) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8) acc = _mm256_fmadd_ps(load_w8<K>(w, i), _mm256_loadu_ps(x + i), acc);
  if (const int rem = int(n - n8)) {
    const __m256 t = _mm256_fmadd_ps(load_w_partial<K>(w, n8, rem), load_partial(x + n8, rem), acc);
    acc = _mm256_blendv_ps(acc, t, _mm256_castsi256_ps(lane_mask(rem)));
  }
  return reduce8(acc);
}

}  // namespace

namespace x86 {

float vec_dot_f32(int64_t n, const float* a, const float* b) {
  return float_dot<FloatRow::F32>(n, reinterpret_cast<const uint8_t*>(a), b);
}

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  const float ss = vec_dot_f32(n, x, x);
  const float scale = 1.0f / sqrtf(ss / float(n) + eps);
  const __m256 vs = _mm256_set1_ps(scale);
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
  if (const int rem = int(n - n8)) {
    const __m256 v =
        _mm256_mul_ps(_mm256_mul_ps(load_partial(x + n8, rem), vs), load_partial(w + n8, rem));
    store_partial(out + n8, v, rem);
  }
}

// m = x[0]; m = x[i] > m ? x[i] : m: max_ps(x, m) is exactly that per lane (a NaN x[i] is passed
// over, a NaN x[0] sticks). Lanes are then folded with the same rule; only the sign of a zero
// maximum can differ from the sequential scan, and x - (+0) and x - (-0) have the same exp.
void softmax(float* x, int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  const int rem = int(n - n8);
  __m256 vm = _mm256_set1_ps(x[0]);
  for (int64_t i = 0; i < n8; i += 8) vm = _mm256_max_ps(_mm256_loadu_ps(x + i), vm);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vm);
  float m = lanes[0];
  for (int j = 1; j < 8; ++j) m = lanes[j] > m ? lanes[j] : m;
  for (int64_t i = n8; i < n; ++i) m = x[i] > m ? x[i] : m;

  const __m256 vmax = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (rem) {
    const __m256 e = exp8(_mm256_sub_ps(load_partial(x + n8, rem), vmax));
    store_partial(x + n8, e, rem);
    acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, e), _mm256_castsi256_ps(lane_mask(rem)));
  }
  const __m256 inv = _mm256_set1_ps(1.0f / reduce8(acc));
  for (int64_t i = 0; i < n8; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  if (rem) store_partial(x + n8, _mm256_mul_ps(load_partial(x + n8, rem), inv), rem);
}

void silu_mul(float* g, const float* u, int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8)
    _mm256_storeu_ps(g + i, silu_mul8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i)));
  if (const int rem = int(n - n8))
    store_partial(g + n8, silu_mul8(load_partial(g + n8, rem), load_partial(u + n8, rem)), rem);
}

// Four pairs at a time: a = x * (c0 c0 c1 c1 ..), b = swap(x) * (s0 s0 s1 s1 ..);
// addsub gives x0*c - x1*s in even lanes and x1*c + x0*s (= x0*s + x1*c) in odd lanes.
void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  const int64_t h4 = half & ~int64_t(3);
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < h4; i += 4) {
      const __m128 c = _mm_loadu_ps(cos + i), s = _mm_loadu_ps(sin + i);
      const __m256 cc = _mm256_set_m128(_mm_unpackhi_ps(c, c), _mm_unpacklo_ps(c, c));
      const __m256 ss = _mm256_set_m128(_mm_unpackhi_ps(s, s), _mm_unpacklo_ps(s, s));
      const __m256 v = _mm256_loadu_ps(xh + 2 * i);
      const __m256 sw = _mm256_permute_ps(v, 0xB1);
      _mm256_storeu_ps(xh + 2 * i, _mm256_addsub_ps(_mm256_mul_ps(v, cc), _mm256_mul_ps(sw, ss)));
    }
    for (int64_t i = h4; i < half; ++i) {
      rotate_pair(xh[2 * i], xh[2 * i + 1], cos[i], sin[i]);
    }
  }
}

// Eight pairs at a time: the halves are contiguous, so no shuffles.
void rope_neox(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  const int64_t h8 = half & ~int64_t(7);
  for (int64_t h = 0; h < n_heads; ++h) {
    float* a = x + h * head_dim;
    float* b = a + half;
    for (int64_t i = 0; i < h8; i += 8) {
      const __m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(b + i);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(a + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
      _mm256_storeu_ps(b + i, _mm256_add_ps(_mm256_mul_ps(x0, s), _mm256_mul_ps(x1, c)));
    }
    for (int64_t i = h8; i < half; ++i) {
      rotate_pair(a[i], b[i], cos[i], sin[i]);
    }
  }
}

void axpy(float* y, float a, const float* x, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  if (const int rem = int(n - n8))
    store_partial(y + n8, _mm256_fmadd_ps(va, load_partial(x + n8, rem), load_partial(y + n8, rem)),
                  rem);
}

// quantize_row_q8_0_ref, vectorised: amax = max(amax, |x|) (max_ps passes a NaN over as
// std::max does), d = amax / 127, id = d >= FLT_MIN ? 1 / d : 0, q = round-to-nearest-even(x * id)
// (cvtps2dq under the default rounding mode), kept as the low byte of the int32 like the scalar
// int8 cast (so a NaN product gives 0 there and here).
void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    const float* xb = x + b * QK8_0;
    const __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
    const __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
    __m256 m = _mm256_setzero_ps();
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v0), m);
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v1), m);
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v2), m);
    m = _mm256_max_ps(_mm256_andnot_ps(sign, v3), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    const float d = amax / 127.0f;
    const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;
    y[b].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    const __m256 vid = _mm256_set1_ps(id);
    const __m256i q0 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v0, vid)), low_byte);
    const __m256i q1 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v1, vid)), low_byte);
    const __m256i q2 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v2, vid)), low_byte);
    const __m256i q3 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v3, vid)), low_byte);
    const __m256i q = _mm256_packus_epi16(_mm256_packus_epi32(q0, q1), _mm256_packus_epi32(q2, q3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), _mm256_permutevar8x32_epi32(q, order));
  }
}

float vec_dot_f16(int64_t n, const void* w, const void* x) {
  return float_dot<FloatRow::F16>(n, static_cast<const uint8_t*>(w), static_cast<const float*>(x));
}

float vec_dot_bf16(int64_t n, const void* w, const void* x) {
  return float_dot<FloatRow::BF16>(n, static_cast<const uint8_t*>(w), static_cast<const float*>(x));
}

float vec_dot_f32_untyped(int64_t n, const void* a, const void* b) {
  return float_dot<FloatRow::F32>(n, static_cast<const uint8_t*>(a), static_cast<const float*>(b));
}

}  // namespace x86

// Only for the tests, after kernels_avx2() said the CPU has AVX2.
void expf_r1pi_avx2_unchecked(const float* x, float* y, int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
  if (const int rem = int(n - n8)) store_partial(y + n8, exp8(load_partial(x + n8, rem)), rem);
}

}  // namespace r1pi

#else  // not x86

namespace r1pi {
void expf_r1pi_avx2_unchecked(const float*, float*, int64_t) {}
}  // namespace r1pi

#endif
