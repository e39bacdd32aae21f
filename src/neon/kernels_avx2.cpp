// The AVX2 backend for x86-64 (AVX2 + FMA + F16C): every Kernels entry, byte for byte the scalar
// reference's result (recipe in kernels.h).
//
// Built three times: as itself ("avx2", -mavx2 -mfma -mf16c), through kernels_avx2_vnni.cpp with
// -mavxvnni as well ("avx2-vnni": the same 256-bit code where vpdpbusd does the work of
// maddubs + madd + add, as sdot does on the Pi), and through kernels_avx512_vnni.cpp with AVX-512
// F/BW/VL/DQ/VNNI ("avx512-vnni": the same again, plus few_tile_pairs, two weight rows per 512-bit
// register for 1 to 8 tokens). Only those three files are compiled with these flags
// (CMakeLists.txt); the rest of r1pi stays baseline x86-64, and kernels.cpp hands out a table only
// after __builtin_cpu_supports says the CPU has every extension it was built for. Hence the rules
// for this file:
//   - no code runs before selection: no namespace-scope object with a dynamic initialiser (the
//     table below is constant-initialised; the fp16 table and scratch buffers are created on
//     first use);
//   - no out-of-line copy of a function that other files may also emit (an inline function or a
//     std:: function template instantiated here could be picked by the linker for baseline code
//     and run AVX2 instructions on any CPU): everything lives in an anonymous namespace, and this
//     file calls no std:: templates (std::integer_sequence is a type only) and includes only C
//     headers, intrinsics and plain declarations. (`nm` on the object shows no weak functions.)
//
// Quantised products. A 32-element block of the weights times a Q8_0 block gives the recipe's
// eight exact lane sums p_j (elements 4j .. 4j+3) in one 256-bit register:
//   maddubs(u8, s8)                   -> 16 pair sums (int16, never saturating here)
//   madd(pairs, 1 or the Q6_K scales) -> 8 sums of four (int32)
// maddubs wants one unsigned operand, and Q4_0 / Q6_K values are offset (q - 8, q - 32); the offset
// is taken off exactly in integers, on whichever side is cheaper:
//   B <= kFewTokens<P> (4, or 8 with AVX-512 row pairs: decode and verification, memory-bound):
//     weights unsigned (q), activations signed; per call, each block's activation lane (pair) sums
//     give the correction: p_j = sum q*x - 8 * sum x (Q4_0), s * (sum q*x - 32 * sum x) (Q6_K). Rows
//     run as a few long streams, each prefetching its next row (few_rows, few_tile).
//   more tokens (prefill, compute-bound): activations unsigned (x + 128, rearranged once per call
//     so that 8 tokens' blocks sit together), weights signed; each weight block's correction
//     -128 * (its lane sums) is computed once and reused for up to 8 tokens.
// Q8_0 weights are signed: maddubs(|w|, x * sign(w)). With AVX-VNNI one vpdpbusd replaces
// maddubs + madd + add (dot4_add); its sums of four never saturate, so the bytes are the same, and
// Q4_0 decode unpacks a block with a single AND (Q4_0Policy::unpack1). The int32 sums become floats exactly by the
// "magic number" route: bits(1.5 * 2^23) + p is the float 1.5 * 2^23 + p for |p| < 2^22, and
// subtracting 1.5 * 2^23 gives float(p) exactly; the magic is folded into the correction, and the
// float subtraction runs on port 5 beside the multiplies (cvtdq2ps would compete with them).
// Then acc_j = fma(d_w * d_x, float(p_j), acc_j), one block after the other, and reduce8 pairs the
// lanes as the recipe says. Each output element keeps its own accumulator and block order, so the
// tiling (rows x tokens, and chunks of blocks for large batches) never changes a result.
#include "neon/kernels.h"
#include "neon/kernels_avx2.h"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "neon/expf_r1pi.h"
#include "ggml/fp16.h"

// This build's extensions: R1PI_AVX512 for the "avx512-vnni" build (kernels_avx512_vnni.cpp),
// R1PI_VNNI where vpdpbusd exists in 256 bits (AVX-VNNI, or AVX512-VNNI with AVX512VL).
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__AVX512VNNI__)
#define R1PI_AVX512 1
#endif
#if defined(__AVXVNNI__) || defined(R1PI_AVX512)
#define R1PI_VNNI 1
#endif

namespace r1pi {

namespace {

// ---- helpers ------------------------------------------------------------------------------------

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// reduce8: s = (a0+a4, a1+a5, a2+a6, a3+a7); t = (s0+s2, s1+s3); t0 + t1.
inline float reduce8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// Lanes 0 .. k-1 set (k in 0..8), for tails.
inline __m256i lane_mask(int k) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), idx);
}

// The first k (< 8) floats of p in the low lanes, zeros above (reads only those k).
inline __m256 load_partial(const float* p, int k) {
  return _mm256_maskload_ps(p, lane_mask(k));
}
inline void store_partial(float* p, __m256 v, int k) { _mm256_maskstore_ps(p, lane_mask(k), v); }

// fp16 -> fp32 for every half, from the reference conversion: scales are looked up (two loads and
// a broadcast, no ALU work) instead of converted one by one. Built on first use.
const float* f16_table() {
  static float* table = [] {
    float* t = static_cast<float*>(::operator new(65536 * sizeof(float), std::align_val_t(64)));
    for (uint32_t h = 0; h < 65536; ++h) t[h] = fp16_to_fp32(uint16_t(h));
    return t;
  }();
  return table;
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Per-thread scratch memory, 64-byte aligned, grown on demand.
struct Scratch {
  void* p = nullptr;
  size_t cap = 0;
  ~Scratch() {
    if (p) ::operator delete(p, std::align_val_t(64));
  }
  void* get(size_t n) {
    if (n > cap) {
      if (p) ::operator delete(p, std::align_val_t(64));
      p = nullptr;
      cap = 0;
      const size_t want = (n + n / 4 + 4095) & ~size_t(4095);
      p = ::operator new(want, std::align_val_t(64));
      cap = want;
    }
    return p;
  }
};
thread_local Scratch tl_prep, tl_acc;

constexpr int32_t kMagicBits = 0x4B400000;  // 1.5 * 2^23
constexpr float kMagic = 12582912.0f;
#ifdef R1PI_VNNI
// 1.5 * 2^19, whose ulp is 1/16: bits(1.5 * 2^19) + 16 p is the float 1.5 * 2^19 + p (|16 p| < 2^22).
constexpr int32_t kMagic16Bits = 0x49400000;
constexpr float kMagic16 = 786432.0f;
#endif

// acc + the sums of four u8 x s8 products per int32 lane. Without VNNI maddubs forms pair sums in
// int16 (saturating: callers keep them in range) and madd adds the pairs; vpdpbusd sums in int32.
inline __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
#if defined(R1PI_AVX512)
  return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// Calls f.template operator()<k>() for k = 0 .. N-1 (compile-time block index within a group).
template <int N, class F>
inline __attribute__((always_inline)) void static_for(F&& f) {
  [&]<int... K>(std::integer_sequence<int, K...>) {
    (f.template operator()<K>(), ...);
  }(std::make_integer_sequence<int, N>{});
}

// ---- float kernels ------------------------------------------------------------------------------

// The recipe's float dot: acc[i % 8] = fma(a[i], b[i], acc[i % 8]); the last n % 8 elements update
// only their own lanes.
float vec_dot_f32(int64_t n, const float* a, const float* b) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8)
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  if (const int rem = int(n - n8)) {
    const __m256 t = _mm256_fmadd_ps(load_partial(a + n8, rem), load_partial(b + n8, rem), acc);
    acc = _mm256_blendv_ps(acc, t, _mm256_castsi256_ps(lane_mask(rem)));
  }
  return reduce8(acc);
}

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256 load_f16_partial(const uint16_t* p, int k) {
  alignas(16) uint16_t tmp[8] = {};
  std::memcpy(tmp, p, size_t(k) * sizeof(uint16_t));
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
}

float vec_dot_f16_f32(int64_t n, const uint16_t* w, const float* x) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8)
    acc = _mm256_fmadd_ps(load_f16x8(w + i), _mm256_loadu_ps(x + i), acc);
  if (const int rem = int(n - n8)) {
    const __m256 t = _mm256_fmadd_ps(load_f16_partial(w + n8, rem), load_partial(x + n8, rem), acc);
    acc = _mm256_blendv_ps(acc, t, _mm256_castsi256_ps(lane_mask(rem)));
  }
  return reduce8(acc);
}

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

inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = exp8(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
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
      const float x0 = xh[2 * i];
      const float x1 = xh[2 * i + 1];
      xh[2 * i] = x0 * cos[i] - x1 * sin[i];
      xh[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
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

// ---- Q8_0 activations ---------------------------------------------------------------------------

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

// ---- quantised matrix products ------------------------------------------------------------------

// The activations of one call, rearranged once for all rows. Two layouts:
//   B <= kFewTokens<P> (decode): the quants are read where they are; for block b and token t, at slot
//     b * B + t, corr holds the token-side offsets (Lanes: int32 lanes bits(magic) - offset * (x0 +
//     x1 + x2 + x3), magic and offset from the policy: Q4_0, and Q6_K with VNNI; Pairs: int16
//     pairs 32 * (x0 + x1), Q6_K without VNNI; Q8_0: none) and dx the scale as float.
//   More tokens: for block b and token t (tokens padded to Bp, a multiple of 8), at slot b * Bp + t:
//     xq the 32 quants, 32-byte aligned (Q4_0 and Q6_K: x + 128 as unsigned bytes, the weights
//     then enter signed and carry the offset correction); dx the scale as float.
struct Prepared {
  int Bp;
  const int8_t* xq;
  const uint8_t* corr;
  const float* dx;
};

enum class Corr { None, Lanes, Pairs };

// Up to this many tokens the weights are unpacked once per row for all of them with token-side
// offsets (decode, small batches: memory-bound); more take the weight-side path (compute-bound).
// With AVX-512, the policies that run in row pairs (few_tile_pairs) stay ahead on that path up to
// 8 tokens (14336 x 4096 Q4_0, B = 8, 2 threads: 3.6 ms against 4.7 ms on avx2-vnni's weight-side
// path, bench_kernels); Q8_0, one row per register, does not (4096 x 4096, B = 8, 1 thread:
// 4.7 ms against 2.8 ms).
template <class P>
constexpr int kFewTokens =
#ifdef R1PI_AVX512
    requires { typename P::W2; } ? 8 : 4;
#else
    4;
#endif

template <class P>
Prepared prepare(const MatmulArgs& a, int64_t nb) {
  const float* lut = f16_table();
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  if (a.B <= kFewTokens<P>) {
    const int Bp = a.B;
    const size_t slots = size_t(nb) * size_t(Bp);
    uint8_t* base = static_cast<uint8_t*>(tl_prep.get(slots * (32 + 4) + 64));
    uint8_t* corr = base;
    float* dx = reinterpret_cast<float*>(base + slots * 32);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
      for (int t = 0; t < a.B; ++t, blk += a.x_row_bytes) {
        const size_t slot = size_t(b) * Bp + t;
        if constexpr (P::kCorr != Corr::None) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
          const __m256i pairs = _mm256_maddubs_epi16(ones8, x);
          __m256i c;
          if constexpr (P::kCorr == Corr::Lanes)
            c = _mm256_sub_epi32(P::magic_bits(),
                                 _mm256_sllv_epi32(_mm256_madd_epi16(pairs, ones16), P::corr_shift()));
          else
            c = _mm256_slli_epi16(pairs, 5);
          _mm256_store_si256(reinterpret_cast<__m256i*>(corr + slot * 32), c);
        }
        dx[slot] = lut[load_u16(blk)];
      }
    }
    return {Bp, nullptr, corr, dx};
  }
  const int Bp = (a.B + 7) & ~7;
  const size_t slots = size_t(nb) * size_t(Bp);
  uint8_t* base = static_cast<uint8_t*>(tl_prep.get(slots * (32 + 4) + 64));
  int8_t* xq = reinterpret_cast<int8_t*>(base);
  float* dx = reinterpret_cast<float*>(base + slots * 32);
  const __m256i flip = _mm256_set1_epi8(P::kUnsignedX ? int8_t(0x80) : 0);
  // Block by block, all tokens: the writes are sequential, and each token row's current cache
  // line serves about two blocks.
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = a.x + b * int64_t(sizeof(block_q8_0));
    int8_t* xqb = xq + size_t(b) * Bp * 32;
    float* dxb = dx + size_t(b) * Bp;
    for (int t = 0; t < a.B; ++t, blk += a.x_row_bytes) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      _mm256_store_si256(reinterpret_cast<__m256i*>(xqb + t * 32), _mm256_xor_si256(x, flip));
      dxb[t] = lut[load_u16(blk)];
    }
    // Padding tokens: defined values (their products are computed and dropped).
    for (int t = a.B; t < Bp; ++t) dxb[t] = 0.0f;
  }
  return {Bp, xq, nullptr, dx};
}

// Q4_0 nibbles of one block in element order: both register halves get the 16 bytes, the upper
// half shifted by 4 (the 32-bit shift drags the next byte's low bits into each high nibble, which
// the mask removes).
inline __m256i q4_nibbles(const uint8_t* qs) {
  const __m256i raw = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  return _mm256_and_si256(_mm256_srlv_epi32(raw, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                          _mm256_set1_epi8(0x0F));
}

#define R1PI_INLINE inline __attribute__((always_inline))

// Each policy unpacks one weight block twice over:
//   unpack1/lanes1 (B <= kFewTokens<P>): weights unsigned, the token-side offsets from Prepared::corr;
//   unpackN/lanesN (more tokens): weights signed, activations x + 128, the offset correction
//     bits(1.5 * 2^23) - 128 * (the lane's weight sum) computed once per block for all tokens.
// lanes* return bits(1.5 * 2^23 + p_j) in each lane.
struct Q4_0Policy {
  static constexpr int kGroup = 1;
  static constexpr int64_t kBlockBytes = sizeof(block_q4_0);
  static constexpr int kRowsSingle = 4;
  static constexpr Corr kCorr = Corr::Lanes;
  static constexpr bool kUnsignedX = true;
  struct W1 {
    __m256i q;   // 0..15
    __m256 dw;
  };
  struct WN {
    __m256i w;     // q - 8
    __m256i corr;  // bits(magic) - 128 * lane sums of w
    __m256 dw;
  };
#ifdef R1PI_VNNI
  // Decode with VNNI: lanes 0..3 take the low nibbles (q), lanes 4..7 the high nibbles left in
  // place (16 q, up to 240: products that only vpdpbusd's int32 sums can hold). The offsets
  // (prepare) are bits(M) - 8 * lane sum of x in lanes 0..3 and bits(M16) - 128 * lane sum in
  // lanes 4..7, so lanes 4..7 hold bits(M16) + 16 p_j, which is the float M16 + p_j; magic() takes
  // M (M16) off. One AND instead of a shift and an AND per block.
  static R1PI_INLINE __m256 magic() {
    return _mm256_setr_ps(kMagic, kMagic, kMagic, kMagic, kMagic16, kMagic16, kMagic16, kMagic16);
  }
  static R1PI_INLINE __m256i magic_bits() {
    return _mm256_setr_epi32(kMagicBits, kMagicBits, kMagicBits, kMagicBits, kMagic16Bits,
                             kMagic16Bits, kMagic16Bits, kMagic16Bits);
  }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_setr_epi32(3, 3, 3, 3, 7, 7, 7, 7); }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    const __m256i raw =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    const __m256i nibbles = _mm256_setr_epi32(0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F,
                                              int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0),
                                              int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0));
    return {_mm256_and_si256(raw, nibbles), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
#ifdef R1PI_AVX512
  // Two rows' block b in one 512-bit register (row0 in lanes 0..7, row1 in 8..15), each half as
  // unpack1 makes it (few_tile_pairs).
  struct W2 {
    __m512i q;
    __m512 dw;
  };
  template <int k>
  static R1PI_INLINE W2 unpack2(const uint8_t* row0, const uint8_t* row1, int64_t b, const float* lut) {
    const uint8_t* blk0 = row0 + b * int64_t(sizeof(block_q4_0));
    const uint8_t* blk1 = row1 + b * int64_t(sizeof(block_q4_0));
    __m512i raw = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk0 + 2)));
    raw = _mm512_mask_broadcast_i32x4(raw, 0xFF00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk1 + 2)));
    const __m512i nibbles = _mm512_broadcast_i64x4(_mm256_setr_epi32(
        0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F, 0x0F0F0F0F, int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0),
        int32_t(0xF0F0F0F0), int32_t(0xF0F0F0F0)));
    const __m512 dw = _mm512_mask_broadcastss_ps(_mm512_set1_ps(lut[load_u16(blk0)]), 0xFF00,
                                                 _mm_load_ss(lut + load_u16(blk1)));
    return {_mm512_and_si512(raw, nibbles), dw};
  }
  static R1PI_INLINE __m512i lanes2(const W2& w, __m512i x, __m512i corr) {
    return _mm512_dpbusd_epi32(corr, w.q, x);
  }
  static R1PI_INLINE __m512 scaled2(__m512 f, const W2&) { return f; }
#endif
#else
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  static R1PI_INLINE __m256i magic_bits() { return _mm256_set1_epi32(kMagicBits); }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_set1_epi32(3); }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    return {q4_nibbles(blk + 2), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
#endif
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    return dot4_add(corr, w.q, x);
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
  // |(x + 128) (q - 8)| <= 255 * 8 per product: pair sums fit int16.
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q4_0));
    const __m256i w = _mm256_sub_epi8(q4_nibbles(blk + 2), _mm256_set1_epi8(8));
    const __m256i s = dot4_add(_mm256_setzero_si256(), _mm256_set1_epi8(int8_t(0x80)), w);
    return {w, _mm256_sub_epi32(_mm256_set1_epi32(kMagicBits), s), _mm256_broadcast_ss(lut + load_u16(blk))};
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    return dot4_add(w.corr, _mm256_load_si256(reinterpret_cast<const __m256i*>(xq)), w.w);
  }
};

// Q8_0 weights are signed both ways: |w| <= 128 and |x| <= 127 (Q8_0 activations) keep the pair
// sums of |w| * (x * sign(w)) within int16.
struct Q8_0Policy {
  static constexpr int kGroup = 1;
  static constexpr int64_t kBlockBytes = sizeof(block_q8_0);
  static constexpr int kRowsSingle = 4;
  static constexpr Corr kCorr = Corr::None;
  static constexpr bool kUnsignedX = false;
  struct W1 {
    __m256i aw;  // |w|
    __m256i w;   // w (for the sign)
    __m256 dw;
  };
  using WN = W1;
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const uint8_t* blk = row + b * int64_t(sizeof(block_q8_0));
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    return {_mm256_abs_epi8(w), w, _mm256_broadcast_ss(lut + load_u16(blk))};
  }
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i) {
    return dot4_add(_mm256_set1_epi32(kMagicBits), w.aw, _mm256_sign_epi8(x, w.w));
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    return unpack1<k>(row, b, lut);
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    return lanes1(w, _mm256_load_si256(reinterpret_cast<const __m256i*>(xq)), __m256i());
  }
};

// Q6_K: block k (0..7) of a super-block is its half h = k / 4, quarter g = k % 4 (q6_K_layout.h):
// low bits ql[64h + 32(g & 1) + l] (low nibble for g < 2), high bits (qh[32h + l] >> 2g) & 3.
// Lanes 0..3 take scales[2k], lanes 4..7 scales[2k + 1]: madd multiplies the pair sums by them,
// or, in decode with VNNI, a float multiply: vpdpbusd gives each lane's t = sum of four (q - 32) x
// exactly (offsets as for Q4_0), and s * t, |s * t| < 2^21, is exact in float.
struct Q6_KPolicy {
  static constexpr int kGroup = 8;
  static constexpr int64_t kBlockBytes = sizeof(block_q6_K) / 8;
#ifdef R1PI_AVX512
  // Two pairs of rows (few_tile_pairs): Q6_K 128256 x 4096 at 2 threads 29.5 -> 30.6 GB/s against
  // one pair (bench_kernels, same run). In 256 bits four rows were slower than two.
  static constexpr int kRowsSingle = 4;
#else
  static constexpr int kRowsSingle = 2;
#endif
  static constexpr bool kUnsignedX = true;
  struct W1 {
    __m256i q;   // 0..63
    __m256i s;   // int16 scales (pairs)
    __m256 sf;   // float scales (lanes), VNNI decode only
    __m256 dw;
  };
#ifdef R1PI_VNNI
  static constexpr Corr kCorr = Corr::Lanes;
  static R1PI_INLINE __m256i magic_bits() { return _mm256_set1_epi32(kMagicBits); }
  static R1PI_INLINE __m256i corr_shift() { return _mm256_set1_epi32(5); }
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    return dot4_add(corr, w.q, x);
  }
  static R1PI_INLINE __m256 scaled(__m256 t, const W1& w) { return _mm256_mul_ps(t, w.sf); }
  // The super-block's 16 scales as floats, 8 per register (the compiler computes them once for
  // the eight blocks), and block k's pair spread over the lanes.
  template <int k>
  static R1PI_INLINE __m256 lane_scales(const block_q6_K* sb) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    const __m256 half = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(k < 4 ? sc : _mm_srli_si128(sc, 8)));
    constexpr int i = 2 * (k % 4);
    return _mm256_permutevar8x32_ps(half, _mm256_setr_epi32(i, i, i, i, i + 1, i + 1, i + 1, i + 1));
  }
#ifdef R1PI_AVX512
  // Two rows' block k of super-block b / 8 in one 512-bit register (row0 in lanes 0..7, row1 in
  // 8..15), each half as unpack1 makes it (few_tile_pairs).
  struct W2 {
    __m512i q;
    __m512 sf;
    __m512 dw;
  };
  template <int k>
  static R1PI_INLINE W2 unpack2(const uint8_t* row0, const uint8_t* row1, int64_t b, const float* lut) {
    const block_q6_K* sb0 = reinterpret_cast<const block_q6_K*>(row0) + b / 8;
    const block_q6_K* sb1 = reinterpret_cast<const block_q6_K*>(row1) + b / 8;
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(quants<k>(sb0)), quants<k>(sb1), 1);
    // Both rows' scales of this half of the super-block (row0's eight, then row1's), as floats.
    const __m128i sc0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb0->scales));
    const __m128i sc1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb1->scales));
    const __m512 half = _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(k < 4 ? _mm_unpacklo_epi64(sc0, sc1) : _mm_unpackhi_epi64(sc0, sc1)));
    constexpr int i = 2 * (k % 4);
    const __m512 sf = _mm512_permutexvar_ps(
        _mm512_setr_epi32(i, i, i, i, i + 1, i + 1, i + 1, i + 1, 8 + i, 8 + i, 8 + i, 8 + i, 9 + i,
                          9 + i, 9 + i, 9 + i),
        half);
    const __m512 dw = _mm512_mask_broadcastss_ps(_mm512_set1_ps(lut[sb0->d]), 0xFF00, _mm_load_ss(lut + sb1->d));
    return {q, sf, dw};
  }
  static R1PI_INLINE __m512i lanes2(const W2& w, __m512i x, __m512i corr) {
    return _mm512_dpbusd_epi32(corr, w.q, x);
  }
  static R1PI_INLINE __m512 scaled2(__m512 t, const W2& w) { return _mm512_mul_ps(t, w.sf); }
#endif
#else
  static constexpr Corr kCorr = Corr::Pairs;
  // (sum q*x - 32 (x0 + x1)) per pair is (q0 - 32) x0 + (q1 - 32) x1, |.| <= 8128; madd multiplies
  // by the scale: p_j = s * sum of the lane's four (q - 32) x, |p_j| < 2^21.
  static R1PI_INLINE __m256i lanes1(const W1& w, __m256i x, __m256i corr) {
    const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(w.q, x), corr);
    return _mm256_add_epi32(_mm256_madd_epi16(pairs, w.s), _mm256_set1_epi32(kMagicBits));
  }
  static R1PI_INLINE __m256 scaled(__m256 f, const W1&) { return f; }
  template <int k>
  static R1PI_INLINE __m256 lane_scales(const block_q6_K*) { return _mm256_setzero_ps(); }
#endif
  struct WN {
    __m256i w;     // q - 32
    __m256i s;
    __m256i corr;  // bits(magic) - 128 * scale * lane sums of w
    __m256 dw;
  };
  // Block k's 32 quants q (0..63) in element order.
  template <int k>
  static R1PI_INLINE __m256i quants(const block_q6_K* sb) {
    constexpr int h = k / 4, g = k % 4;
    const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->ql + 64 * h + 32 * (g & 1)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb->qh + 32 * h));
    const __m256i m0F = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    __m256i lo, hi;
    if constexpr (g < 2) lo = _mm256_and_si256(ql, m0F);
    else lo = _mm256_and_si256(_mm256_srli_epi16(ql, 4), m0F);
    if constexpr (g == 0) hi = _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30);
    else if constexpr (g == 1) hi = _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30);
    else if constexpr (g == 2) hi = _mm256_and_si256(qh, m30);
    else hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30);
    return _mm256_or_si256(lo, hi);
  }
  template <int k>
  static R1PI_INLINE W1 unpack1(const uint8_t* row, int64_t b, const float* lut) {
    const block_q6_K* sb = reinterpret_cast<const block_q6_K*>(row) + b / 8;
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb->scales));
    const __m128i pick = _mm_setr_epi8(2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k, 2 * k,
                                       2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1,
                                       2 * k + 1, 2 * k + 1, 2 * k + 1);
    const __m256i s = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, pick));
    return {quants<k>(sb), s, lane_scales<k>(sb), _mm256_broadcast_ss(lut + sb->d)};
  }
  static R1PI_INLINE __m256 magic() { return _mm256_set1_ps(kMagic); }
  // |(x + 128) (q - 32)| <= 255 * 32 per product: pair sums fit int16.
  template <int k>
  static R1PI_INLINE WN unpackN(const uint8_t* row, int64_t b, const float* lut) {
    const W1 u = unpack1<k>(row, b, lut);
    const __m256i w = _mm256_sub_epi8(u.q, _mm256_set1_epi8(32));
    const __m256i c = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(int8_t(0x80)), w), u.s);
    return {w, u.s, _mm256_sub_epi32(_mm256_set1_epi32(kMagicBits), c), u.dw};
  }
  static R1PI_INLINE __m256i lanesN(const WN& w, const int8_t* xq) {
    const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq));
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(x, w.w), w.s), w.corr);
  }
};

// Token t's activation block bk in decode (B = T <= kFewTokens<P>): its quants, the offsets that
// prepare() made for it (zero where the policy needs none) and its scale.
struct TokenBlock {
  __m256i q, corr;
  float d;
};
template <class P, int T>
R1PI_INLINE TokenBlock token_block(const MatmulArgs& a, const Prepared& pp, int64_t bk, int t) {
  const size_t slot = size_t(bk) * T + t;
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(
              a.x + size_t(t) * a.x_row_bytes + bk * int64_t(sizeof(block_q8_0)) + 2)),
          P::kCorr != Corr::None ? _mm256_load_si256(reinterpret_cast<const __m256i*>(pp.corr + slot * 32))
                                 : _mm256_setzero_si256(),
          pp.dx[slot]};
}

// Calls block.operator()<k, prefetch>(b) for the blocks b + k of a row in order (k: the block
// within a policy's group). Where two blocks still fit in a cache line, the rows prefetch with
// every second block only: decode runs short of instruction slots more than of anything else.
template <class P, class F>
R1PI_INLINE void for_each_block(int64_t nb, F& block) {
  constexpr bool kPairs = 2 * P::kBlockBytes <= 64;
  if constexpr (P::kGroup == 1 && kPairs) {
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      block.template operator()<0, true>(b);
      block.template operator()<0, false>(b + 1);
    }
    if (b < nb) block.template operator()<0, true>(b);
  } else {
    for (int64_t b = 0; b < nb; b += P::kGroup)
      static_for<P::kGroup>([&]<int k>() { block.template operator()<k, k % 2 == 0 || !kPairs>(b); });
  }
}

#ifdef R1PI_AVX512
// few_tile with rows 2i and 2i + 1 in one 512-bit register (lanes 0..7 and 8..15): each lane is
// computed exactly as in the 256-bit tile, with about half the instructions per weight byte.
// Policies with unpack2 / lanes2 / scaled2 take this path (bench_kernels at 2 threads against
// avx2-vnni, same runs): Q6_K decode, whose unpacking is the costliest, 25.7 -> 29.7 GB/s
// (128256 x 4096); Q4_0 reads no faster from memory at B = 1, but 2 and 4 tokens (speculative
// verification) take 0.45 -> 0.37 and 0.91 -> 0.58 ms (4096 x 4096).
template <class P, int R, int T>
R1PI_INLINE void few_tile_pairs(const uint8_t* const* rows, const MatmulArgs& a, const Prepared& pp,
                                int64_t nb, __m256 (&acc)[R][T], const float* lut, size_t pf) {
  constexpr int H = R / 2;
  __m512 acc2[H][T];
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t)
      acc2[h][t] = _mm512_insertf32x8(_mm512_castps256_ps512(acc[2 * h][t]), acc[2 * h + 1][t], 1);
  const __m512 magic = _mm512_broadcast_f32x8(P::magic());
  auto block = [&]<int k, bool kPrefetch>(int64_t b) {
    const int64_t bk = b + k;
    __m512i xv[T], corr[T];
    __m512 dxb[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const TokenBlock x = token_block<P, T>(a, pp, bk, t);
      xv[t] = _mm512_broadcast_i64x4(x.q);
      corr[t] = _mm512_broadcast_i64x4(x.corr);
      dxb[t] = _mm512_set1_ps(x.d);
    }
#pragma GCC unroll 8
    for (int h = 0; h < H; ++h) {
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[2 * h] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(rows[2 * h + 1] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
      }
      const typename P::W2 w = P::template unpack2<k>(rows[2 * h], rows[2 * h + 1], b, lut);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m512 d = _mm512_mul_ps(w.dw, dxb[t]);
        const __m512 f =
            P::scaled2(_mm512_sub_ps(_mm512_castsi512_ps(P::lanes2(w, xv[t], corr[t])), magic), w);
        acc2[h][t] = _mm512_fmadd_ps(d, f, acc2[h][t]);
      }
    }
  };
  for_each_block<P>(nb, block);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) {
      acc[2 * h][t] = _mm512_castps512_ps256(acc2[h][t]);
      acc[2 * h + 1][t] = _mm512_extractf32x8_ps(acc2[h][t], 1);
    }
}
#endif

// Few tokens (B <= kFewTokens<P>): R rows x T tokens over all blocks; each weight block is unpacked
// once for the T tokens, whose activation blocks (with offsets and scales) are loaded once per
// block for the R rows. acc[r][t] lane j = fma(d, float(p_j), acc[r][t]) block after block.
// Decode streams the weights from memory with little work per byte: the out-of-order window alone
// keeps too few cache lines in flight, so each row prefetches `pf` bytes further along its stream
// (see few_rows; prefetch never faults, past the end it is merely wasted).
template <class P, int R, int T>
R1PI_INLINE void few_tile(const uint8_t* const* rows, const MatmulArgs& a, const Prepared& pp,
                          int64_t nb, __m256 (&acc)[R][T], const float* lut, size_t pf) {
#ifdef R1PI_AVX512
  if constexpr (R % 2 == 0 && requires { typename P::W2; }) {
    few_tile_pairs<P, R, T>(rows, a, pp, nb, acc, lut, pf);
    return;
  }
#endif
  const __m256 magic = P::magic();
  // Block b + k of every row (k: the block within a policy's group).
  auto block = [&]<int k, bool kPrefetch>(int64_t b) {
    const int64_t bk = b + k;
    __m256i xv[T], corr[T];
    __m256 dxb[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const TokenBlock x = token_block<P, T>(a, pp, bk, t);
      xv[t] = x.q;
      corr[t] = x.corr;
      dxb[t] = _mm256_set1_ps(x.d);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if constexpr (kPrefetch)
        _mm_prefetch(reinterpret_cast<const char*>(rows[r] + pf + bk * P::kBlockBytes), _MM_HINT_T0);
      const typename P::W1 w = P::template unpack1<k>(rows[r], b, lut);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m256 d = _mm256_mul_ps(w.dw, dxb[t]);
        const __m256 f =
            P::scaled(_mm256_sub_ps(_mm256_castsi256_ps(P::lanes1(w, xv[t], corr[t])), magic), w);
        acc[r][t] = _mm256_fmadd_ps(d, f, acc[r][t]);
      }
    }
  };
  for_each_block<P>(nb, block);
}

// Rows [r0, r1), (r1 - r0) a multiple of R, as R streams: the range is cut into R equal parts and
// tile i takes row i of each part. Each stream then reads consecutive rows, one long sequential
// run of memory, which the hardware prefetchers follow far better than R adjacent short rows:
// on the 2-core test VM, Q4_0 14336 x 4096 at 2 threads went from 0.70 to 0.92 of the read
// bandwidth (bench_kernels, rows in the engine's chunks). Which tile a row is in never changes
// its result.
// How far ahead each stream prefetches: the rows' own length when shorter. Farther (a whole 8 KB
// w2 row) left the activations less room in L1: w2 (4096 x 14336) at 2 threads 26.7-27.4 GB/s with
// a row ahead, 30.8-31.7 with 1 KB; 512 B was too close (bench_kernels, same runs).
constexpr int64_t kPrefetchAhead = 1024;

template <class P, int R, int T>
void few_rows(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1,
              const float* lut) {
  const int64_t q = (r1 - r0) / R;
  // Each stream prefetches only ahead of itself: start the first lines of every stream now.
  const int64_t ahead = min64(int64_t(a.w_row_bytes), kPrefetchAhead);
  if (r1 - r0 >= R) {
    for (int i = 0; i < R; ++i)
      for (int64_t o = 0; o < ahead; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(a.w + size_t(r0 + i * q) * a.w_row_bytes + o), _MM_HINT_T0);
  }
  for (int64_t r = r0; r < r0 + q; ++r) {
    __m256 acc[R][T];
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) {
      rows[i] = a.w + size_t(r + i * q) * a.w_row_bytes;
      for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
    }
    few_tile<P, R, T>(rows, a, pp, nb, acc, lut, size_t(ahead));
    for (int i = 0; i < R; ++i)
      for (int t = 0; t < T; ++t) a.out[int64_t(t) * a.out_stride + r + i * q] = reduce8(acc[i][t]);
  }
}

// Rows [a.r0, a.r1) for T = a.B tokens: full tiles of R rows, then single rows.
template <class P, int T>
void few_tokens(const MatmulArgs& a, const Prepared& pp, int64_t nb, const float* lut) {
#ifdef R1PI_AVX512
  // 32 vector registers: the full tile for 3 and 4 tokens too (14336 x 4096 Q4_0, B = 4, 2 threads:
  // 2.13 -> 1.96 ms; bench_kernels); one pair of rows for 5 to 8 (two: 1.23 vs 1.18 ms, 4096 x 4096).
  constexpr int R = T <= 4 ? P::kRowsSingle : P::kRowsSingle / 2;
#else
  constexpr int R = T <= 2 ? P::kRowsSingle : (P::kRowsSingle / 2 > 1 ? P::kRowsSingle / 2 : 1);
#endif
  const int64_t rfull = a.r0 + (a.r1 - a.r0) / R * R;
  few_rows<P, R, T>(a, pp, nb, a.r0, rfull, lut);
  if constexpr (R > 1) few_rows<P, 1, T>(a, pp, nb, rfull, a.r1, lut);
}

// B > 1: R weight rows x T tokens over blocks [kb0, kb1).
template <class P, int R, int T>
R1PI_INLINE void multi_tile(const uint8_t* const* rows, const Prepared& pp, int t0, int64_t kb0,
                            int64_t kb1, __m256 (&acc)[R][T], const float* lut, size_t pf) {
  const __m256 magic = _mm256_set1_ps(kMagic);
  for (int64_t b = kb0; b < kb1; b += P::kGroup) {
    static_for<P::kGroup>([&]<int k>() {
      const size_t slot = size_t(b + k) * pp.Bp + t0;
      const int8_t* xq = pp.xq + slot * 32;
      #pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[r] + pf + (b + k) * P::kBlockBytes), _MM_HINT_T0);
        const typename P::WN w = P::template unpackN<k>(rows[r], b, lut);
        // The T scales d = d_w * d_x at once, then one broadcast per token.
        alignas(32) float d8[8];
        _mm256_store_ps(d8, _mm256_mul_ps(w.dw, _mm256_load_ps(pp.dx + slot)));
        #pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(P::lanesN(w, xq + 32 * t)), magic);
          acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(d8 + t), f, acc[r][t]);
        }
      }
    });
  }
}

// Rows per tile for T tokens: about 8 accumulators (fma chains) in flight, 16 registers in all.
constexpr int rows_for(int T) { return T <= 2 ? 4 : T <= 4 ? 2 : 1; }
constexpr int kRowGroup = 32;        // rows whose weights stay in cache across the token tiles
constexpr int64_t kBlockChunk = 64;  // blocks per pass when the tokens need several tiles

template <class P, int R, int T>
void multi_rows(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1, int t0,
                int64_t chunk, __m256* accbuf, const float* lut) {
  for (int64_t kb0 = 0; kb0 < nb; kb0 += chunk) {
    const int64_t kb1 = min64(nb, kb0 + chunk);
    const bool first = kb0 == 0, last = kb1 == nb;
    for (int64_t r = r0; r < r1; r += R) {
      __m256 acc[R][T];
      const uint8_t* rows[R];
      for (int i = 0; i < R; ++i) {
        rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
        for (int t = 0; t < T; ++t)
          acc[i][t] = first ? _mm256_setzero_ps() : accbuf[(r - r0 + i) * 8 + t];
      }
      // The first token tile streams the weights from memory: prefetch as for B = 1. Later tiles
      // find them in L2 (pf = 0 prefetches what is being read: a no-op).
      multi_tile<P, R, T>(rows, pp, t0, kb0, kb1, acc, lut, t0 == 0 ? size_t(R) * a.w_row_bytes : 0);
      for (int i = 0; i < R; ++i)
        for (int t = 0; t < T; ++t) {
          if (last) a.out[int64_t(t0 + t) * a.out_stride + r + i] = reduce8(acc[i][t]);
          else accbuf[(r - r0 + i) * 8 + t] = acc[i][t];
        }
    }
  }
}

// Rows [r0, r1) of one token tile: full tiles of R rows, then single rows.
template <class P, int R, int T>
void multi_token_tile(const MatmulArgs& a, const Prepared& pp, int64_t nb, int64_t r0, int64_t r1,
                      int t0, int64_t chunk, __m256* accbuf, const float* lut) {
  const int64_t rfull = r0 + (r1 - r0) / R * R;
  if (rfull > r0) multi_rows<P, R, T>(a, pp, nb, r0, rfull, t0, chunk, accbuf, lut);
  if (R > 1 && rfull < r1)
    multi_rows<P, 1, T>(a, pp, nb, rfull, r1, t0, chunk, accbuf + (rfull - r0) * 8, lut);
}

template <class P>
void matmul_quant(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  const int64_t nb = a.n / QK8_0;
  const float* lut = f16_table();
  const Prepared pp = prepare<P>(a, nb);
  switch (a.B) {
    case 1: few_tokens<P, 1>(a, pp, nb, lut); return;
    case 2: few_tokens<P, 2>(a, pp, nb, lut); return;
    case 3: few_tokens<P, 3>(a, pp, nb, lut); return;
    case 4: few_tokens<P, 4>(a, pp, nb, lut); return;
    default: break;
  }
  if constexpr (kFewTokens<P> == 8) {
    switch (a.B) {
      case 5: few_tokens<P, 5>(a, pp, nb, lut); return;
      case 6: few_tokens<P, 6>(a, pp, nb, lut); return;
      case 7: few_tokens<P, 7>(a, pp, nb, lut); return;
      case 8: few_tokens<P, 8>(a, pp, nb, lut); return;
      default: break;
    }
  }
  // Several token tiles: each pass over a chunk of blocks keeps that chunk's activations (8 tokens)
  // in L1 while the row group's weights come from L2.
  const int64_t chunk = a.B > 8 ? (kBlockChunk + P::kGroup - 1) / P::kGroup * P::kGroup : nb;
  __m256* accbuf = static_cast<__m256*>(tl_acc.get(sizeof(__m256) * 8 * kRowGroup));
  for (int64_t rg = a.r0; rg < a.r1; rg += kRowGroup) {
    const int64_t rg1 = min64(a.r1, rg + kRowGroup);
    for (int t0 = 0; t0 < a.B; t0 += 8) {
      switch (a.B - t0 >= 8 ? 8 : a.B - t0) {
        case 1: multi_token_tile<P, rows_for(1), 1>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 2: multi_token_tile<P, rows_for(2), 2>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 3: multi_token_tile<P, rows_for(3), 3>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 4: multi_token_tile<P, rows_for(4), 4>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 5: multi_token_tile<P, rows_for(5), 5>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 6: multi_token_tile<P, rows_for(6), 6>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        case 7: multi_token_tile<P, rows_for(7), 7>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
        default: multi_token_tile<P, rows_for(8), 8>(a, pp, nb, rg, rg1, t0, chunk, accbuf, lut); break;
      }
    }
  }
}

void matmul_q4_0_q8_0(const MatmulArgs& a) { matmul_quant<Q4_0Policy>(a); }
void matmul_q8_0_q8_0(const MatmulArgs& a) { matmul_quant<Q8_0Policy>(a); }
void matmul_q6_K_q8_0(const MatmulArgs& a) { matmul_quant<Q6_KPolicy>(a); }

// One row times one token through the matrix product (the same arithmetic by construction).
template <void (*Matmul)(const MatmulArgs&)>
float dot_via_matmul(int64_t n, const void* w, const void* x) {
  float out = 0.0f;
  const MatmulArgs a{n, static_cast<const uint8_t*>(w), 0, 0, 1, static_cast<const uint8_t*>(x),
                     0, 1, &out, 0};
  Matmul(a);
  return out;
}

// ---- float matrix products ----------------------------------------------------------------------

template <bool F16>
inline __m256 load_w8(const uint8_t* row, int64_t i) {
  if constexpr (F16) return load_f16x8(reinterpret_cast<const uint16_t*>(row) + i);
  else return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
}

template <bool F16>
inline __m256 load_w_partial(const uint8_t* row, int64_t i, int k) {
  if constexpr (F16) return load_f16_partial(reinterpret_cast<const uint16_t*>(row) + i, k);
  else return load_partial(reinterpret_cast<const float*>(row) + i, k);
}

template <bool F16, int R, int T>
void float_tile(const MatmulArgs& a, int64_t r, int t0) {
  const uint8_t* rows[R];
  const float* xs[T];
  for (int i = 0; i < R; ++i) rows[i] = a.w + size_t(r + i) * a.w_row_bytes;
  for (int t = 0; t < T; ++t)
    xs[t] = reinterpret_cast<const float*>(a.x + size_t(t0 + t) * a.x_row_bytes);
  __m256 acc[R][T];
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < T; ++t) acc[i][t] = _mm256_setzero_ps();
  const int64_t n8 = a.n & ~int64_t(7);
  for (int64_t e = 0; e < n8; e += 8) {
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w8<F16>(rows[i], e);
      for (int t = 0; t < T; ++t) acc[i][t] = _mm256_fmadd_ps(w, _mm256_loadu_ps(xs[t] + e), acc[i][t]);
    }
  }
  if (const int rem = int(a.n - n8)) {
    const __m256 m = _mm256_castsi256_ps(lane_mask(rem));
    for (int i = 0; i < R; ++i) {
      const __m256 w = load_w_partial<F16>(rows[i], n8, rem);
      for (int t = 0; t < T; ++t)
        acc[i][t] = _mm256_blendv_ps(
            acc[i][t], _mm256_fmadd_ps(w, load_partial(xs[t] + n8, rem), acc[i][t]), m);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < T; ++t) a.out[int64_t(t0 + t) * a.out_stride + r + i] = reduce8(acc[i][t]);
}

template <bool F16, int R, int T>
void float_rows(const MatmulArgs& a, int t0) {
  int64_t r = a.r0;
  for (; r + R <= a.r1; r += R) float_tile<F16, R, T>(a, r, t0);
  for (; r < a.r1; ++r) float_tile<F16, 1, T>(a, r, t0);
}

template <bool F16>
void matmul_float(const MatmulArgs& a) {
  if (a.r1 <= a.r0 || a.B <= 0) return;
  if (a.B == 1) {
    float_rows<F16, 4, 1>(a, 0);
    return;
  }
  for (int t0 = 0; t0 < a.B; t0 += 4) {
    switch (a.B - t0 >= 4 ? 4 : a.B - t0) {
      case 1: float_rows<F16, 4, 1>(a, t0); break;
      case 2: float_rows<F16, 2, 2>(a, t0); break;
      case 3: float_rows<F16, 2, 3>(a, t0); break;
      default: float_rows<F16, 2, 4>(a, t0); break;
    }
  }
}

void matmul_f16_f32(const MatmulArgs& a) { matmul_float<true>(a); }
void matmul_f32_f32(const MatmulArgs& a) { matmul_float<false>(a); }

// A quantised type's entries: its matrix product, and vec_dot as the product of one row and token.
template <void (*Matmul)(const MatmulArgs&)>
constexpr TypeKernels quant_entries() {
  return {.vec_dot = dot_via_matmul<Matmul>, .matmul = Matmul};
}

constexpr Kernels kAvx2 = {
#if defined(R1PI_AVX512)
    .name = "avx512-vnni",
#elif defined(__AVXVNNI__)
    .name = "avx2-vnni",
#else
    .name = "avx2",
#endif
    .quantize_row_q8_0 = quantize_row_q8_0,
    .q4_0 = quant_entries<matmul_q4_0_q8_0>(),
    .q8_0 = quant_entries<matmul_q8_0_q8_0>(),
    .q6_K = quant_entries<matmul_q6_K_q8_0>(),
    .f16 = {.vec_dot = untyped_dot<uint16_t, float, vec_dot_f16_f32>, .matmul = matmul_f16_f32},
    .f32 = {.vec_dot = untyped_dot<float, float, vec_dot_f32>, .matmul = matmul_f32_f32},
    .vec_dot_f32 = vec_dot_f32,
    .rmsnorm = rmsnorm,
    .softmax = softmax,
    .silu_mul = silu_mul,
    .rope = rope,
    .axpy = axpy,
};

}  // namespace

// Only kernels.cpp calls these, after checking the CPU (kernels_avx2*() in kernels.h).
#if defined(R1PI_AVX512)
const Kernels* kernels_avx512_vnni_unchecked() { return &kAvx2; }
#elif defined(__AVXVNNI__)
const Kernels* kernels_avx2_vnni_unchecked() { return &kAvx2; }
#else
const Kernels* kernels_avx2_unchecked() { return &kAvx2; }

void expf_r1pi_avx2_unchecked(const float* x, float* y, int64_t n) {
  const int64_t n8 = n & ~int64_t(7);
  for (int64_t i = 0; i < n8; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
  if (const int rem = int(n - n8)) store_partial(y + n8, exp8(load_partial(x + n8, rem)), rem);
}
#endif

}  // namespace r1pi

#else  // not x86

namespace r1pi {
const Kernels* kernels_avx2_unchecked() { return nullptr; }
void expf_r1pi_avx2_unchecked(const float*, float*, int64_t) {}
}  // namespace r1pi

#endif
