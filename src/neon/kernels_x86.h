// What every x86 backend shares (AVX2, AVX2 with VNNI, AVX-512 with VNNI): small vector helpers,
// the float ops, the Q8_0 activation quantiser and the float matrix products. Only files built for
// AVX2 or more include this (CMakeLists.txt); the rest of r1pi stays baseline x86-64, and
// kernels.cpp hands out a table only after __builtin_cpu_supports says the CPU has every extension
// it was built for. Hence the rules for every x86 kernel file:
//   - no code runs before selection: no namespace-scope object with a dynamic initialiser (the
//     tables are constant-initialised; the fp16 table and scratch buffers are created on first use);
//   - no out-of-line copy of a function that another file may also emit (an inline function or a
//     std:: function template instantiated in two files could be picked by the linker for baseline
//     code, or for the AVX2 backend from the AVX-512 file): the helpers below sit in an anonymous
//     namespace, so each file that includes them has its own copy built with its own flags; the
//     files call no std:: templates (std::integer_sequence is a type only) and include only C
//     headers, intrinsics and plain declarations. (`nm` on the objects shows no weak functions.)
// The float ops and float products use nothing beyond AVX2 + FMA + F16C, so they are built once,
// in kernels_x86_ops.cpp and kernels_x86_float.cpp (as AVX2), and every x86 table points at them.
#pragma once

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>

#include "ggml/fp16.h"
#include "neon/kernels.h"

#define R1PI_INLINE inline __attribute__((always_inline))

namespace r1pi {

// ---- built once for AVX2 (kernels_x86_ops.cpp, kernels_x86_float.cpp) ---------------------------
namespace x86 {
void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t n);
float vec_dot_f32(int64_t n, const float* a, const float* b);
void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps);
void softmax(float* x, int64_t n);
void silu_mul(float* g, const float* u, int64_t n);
void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin);
void rope_neox(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin);
void axpy(float* y, float a, const float* x, int64_t n);
// The TypeKernels entries of the float weight types.
float vec_dot_f16(int64_t n, const void* w, const void* x);
float vec_dot_bf16(int64_t n, const void* w, const void* x);
float vec_dot_f32_untyped(int64_t n, const void* a, const void* b);
void matmul_f16_f32(const MatmulArgs& a);
void matmul_bf16_f32(const MatmulArgs& a);
void matmul_f32_f32(const MatmulArgs& a);
void weighted_sum_f32(const WeightedSumArgs& a);
void weighted_sum_f16(const WeightedSumArgs& a);
void weighted_sum_q8_0(const WeightedSumArgs& a);
}  // namespace x86

namespace {

// An x86 backend's table: its own entries by type (the quantised products; float ones replace the
// shared ones below), the shared float ops.
constexpr Kernels x86_kernels(const char* name, std::initializer_list<TypeEntry> own) {
  return {
      .name = name,
      .quantize_row_q8_0 = x86::quantize_row_q8_0,
      .types = with(by_type({{GgmlType::F32, {x86::vec_dot_f32_untyped, x86::matmul_f32_f32}},
                             {GgmlType::F16, {x86::vec_dot_f16, x86::matmul_f16_f32}},
                             {GgmlType::BF16, {x86::vec_dot_bf16, x86::matmul_bf16_f32}}}),
                    own),
      R1PI_FLOAT_OPS(x86::),
      .weighted_sum_f32 = x86::weighted_sum_f32,
      .weighted_sum_f16 = x86::weighted_sum_f16,
      .weighted_sum_q8_0 = x86::weighted_sum_q8_0,
  };
}

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

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256 load_f16_partial(const uint16_t* p, int k) {
  alignas(16) uint16_t tmp[8] = {};
  std::memcpy(tmp, p, size_t(k) * sizeof(uint16_t));
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
}

// The element type of a float weight row (F32, F16 or BF16); all three widen to float exactly.
enum class FloatRow { F32, F16, BF16 };
constexpr int row_elem_bytes(FloatRow k) { return k == FloatRow::F32 ? 4 : 2; }

// bfloat16 is a float's top half: widened by a shift into place (exact, NaNs included).
inline __m256 bf16x8_to_ps(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// Eight (or the first k < 8) weights of a float row from element i, as floats.
template <FloatRow K>
inline __m256 load_w8(const uint8_t* row, int64_t i) {
  if constexpr (K == FloatRow::F16) return load_f16x8(reinterpret_cast<const uint16_t*>(row) + i);
  else if constexpr (K == FloatRow::BF16)
    return bf16x8_to_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  else return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
}

template <FloatRow K>
inline __m256 load_w_partial(const uint8_t* row, int64_t i, int k) {
  if constexpr (K == FloatRow::F16) return load_f16_partial(reinterpret_cast<const uint16_t*>(row) + i, k);
  else if constexpr (K == FloatRow::BF16) {
    alignas(16) uint16_t tmp[8] = {};
    std::memcpy(tmp, row + 2 * i, size_t(k) * sizeof(uint16_t));
    return bf16x8_to_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
  } else return load_partial(reinterpret_cast<const float*>(row) + i, k);
}

// fp16 -> fp32 for every half, from the reference conversion: scales are looked up (two loads and
// a broadcast, no ALU work) instead of converted one by one. Built on first use.
inline const float* f16_table() {
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

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Calls f.template operator()<k>() for k = 0 .. N-1 (compile-time block index within a group).
// The expansion is always inlined too: GCC otherwise may call it, with the caller's accumulators
// passed through memory (the avx512-vnni Q4_K batch tile ran at half speed so).
template <int N, class F>
R1PI_INLINE void static_for(F&& f) {
  [&]<int... K>(std::integer_sequence<int, K...>) __attribute__((always_inline)) {
    (f.template operator()<K>(), ...);
  }(std::make_integer_sequence<int, N>{});
}

}  // namespace
}  // namespace r1pi

#endif
