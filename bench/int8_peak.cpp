#include "int8_peak.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace r1pi::bench {

namespace {

constexpr int64_t kSteps = 1 << 22;  // per thread: a few hundred ms on one core

// Keeps the compiler from treating a register as constant (and so hoisting the products out of the
// loop); costs no instruction. The chains are unrolled so that each accumulator stays in a register.
template <typename V>
inline void opaque(V& v) {
  asm volatile("" : "+x"(v));
}

#if defined(__x86_64__)
// 12 chains x 64 lanes' worth of u8*s8 multiply-adds per step: 12 * 64 * 2 ops for a zmm vpdpbusd.
__attribute__((target("avx512f,avx512vnni"))) uint64_t steps_avx512_vnni(int64_t n) {
  __m512i acc[12];
  for (__m512i& a : acc) a = _mm512_setzero_si512();
  __m512i x = _mm512_set1_epi8(3), w = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < n; ++i) {
    opaque(x);
#pragma GCC unroll 12
    for (__m512i& a : acc) a = _mm512_dpbusd_epi32(a, x, w);
  }
  alignas(64) int32_t lanes[16];
  uint64_t s = 0;
  for (__m512i& a : acc) {
    _mm512_store_si512(lanes, a);
    for (int32_t v : lanes) s += uint64_t(v);
  }
  return s;
}

__attribute__((target("avx2,avxvnni"))) uint64_t steps_avx2_vnni(int64_t n) {
  __m256i acc[12];
  for (__m256i& a : acc) a = _mm256_setzero_si256();
  __m256i x = _mm256_set1_epi8(3), w = _mm256_set1_epi8(-2);
  for (int64_t i = 0; i < n; ++i) {
    opaque(x);
#pragma GCC unroll 12
    for (__m256i& a : acc) a = _mm256_dpbusd_avx_epi32(a, x, w);
  }
  alignas(32) int32_t lanes[8];
  uint64_t s = 0;
  for (__m256i& a : acc) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a);
    for (int32_t v : lanes) s += uint64_t(v);
  }
  return s;
}

// AVX2 without VNNI: the three instructions the avx2 backend's products use per 32 multiply-adds.
__attribute__((target("avx2"))) uint64_t steps_avx2(int64_t n) {
  __m256i acc[12];
  for (__m256i& a : acc) a = _mm256_setzero_si256();
  __m256i x = _mm256_set1_epi8(3), w = _mm256_set1_epi8(-2);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < n; ++i) {
    opaque(x);
#pragma GCC unroll 12
    for (__m256i& a : acc) a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), ones));
  }
  alignas(32) int32_t lanes[8];
  uint64_t s = 0;
  for (__m256i& a : acc) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a);
    for (int32_t v : lanes) s += uint64_t(v);
  }
  return s;
}
#endif

#if defined(__aarch64__)
template <>
inline void opaque(int8x16_t& v) {
  asm volatile("" : "+w"(v));
}

__attribute__((target("arch=armv8.2-a+dotprod"))) uint64_t steps_neon_dotprod(int64_t n) {
  int32x4_t acc[12];
  for (int32x4_t& a : acc) a = vdupq_n_s32(0);
  int8x16_t x = vdupq_n_s8(3), w = vdupq_n_s8(-2);
  for (int64_t i = 0; i < n; ++i) {
    opaque(x);
#pragma GCC unroll 12
    for (int32x4_t& a : acc) a = vdotq_s32(a, x, w);
  }
  uint64_t s = 0;
  for (int32x4_t& a : acc) s += uint64_t(vaddvq_s32(a));
  return s;
}

// Without the dot product: smull + sadalp, as the neon backend's products, per 8 multiply-adds.
uint64_t steps_neon(int64_t n) {
  int32x4_t acc[12];
  for (int32x4_t& a : acc) a = vdupq_n_s32(0);
  int8x16_t x = vdupq_n_s8(3), w = vdupq_n_s8(-2);
  for (int64_t i = 0; i < n; ++i) {
    opaque(x);
#pragma GCC unroll 12
    for (int32x4_t& a : acc) a = vpadalq_s16(a, vmull_s8(vget_low_s8(x), vget_low_s8(w)));
  }
  uint64_t s = 0;
  for (int32x4_t& a : acc) s += uint64_t(vaddvq_s32(a));
  return s;
}
#endif

// A backend's instruction: the steps loop and the ops one step does (12 chains, 2 per multiply-add).
struct PeakRow {
  const char* backend;
  uint64_t (*steps)(int64_t);
  double ops_per_step;
};
const PeakRow kPeakRows[] = {
#if defined(__x86_64__)
    {"avx512-vnni", steps_avx512_vnni, 12 * 64 * 2},
    {"avx2-vnni", steps_avx2_vnni, 12 * 32 * 2},
    {"avx2", steps_avx2, 12 * 32 * 2},
#elif defined(__aarch64__)
    {"neon-dotprod", steps_neon_dotprod, 12 * 16 * 2},
    {"neon", steps_neon, 12 * 8 * 2},
#endif
};

}  // namespace

double int8_peak_gops(const char* backend, int threads) {
  for (const PeakRow& row : kPeakRows) {
    if (std::strcmp(row.backend, backend) != 0) continue;
    // Every thread runs its loop once, all at the same time (a pool could hand one thread two).
    std::atomic<uint64_t> sink{0};
    const auto start = std::chrono::steady_clock::now();
    {
      std::vector<std::jthread> others;
      for (int t = 1; t < threads; ++t) others.emplace_back([&] { sink += row.steps(kSteps); });
      sink += row.steps(kSteps);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return row.ops_per_step * double(kSteps) * double(threads) / seconds / 1e9;
  }
  return 0;
}

}  // namespace r1pi::bench
