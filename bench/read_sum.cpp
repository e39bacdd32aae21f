#include "read_sum.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace r1pi::bench {

namespace {

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

uint64_t sum_sse2(const uint8_t* p, size_t n) {
  __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 64) {
    a0 = _mm_add_epi64(a0, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
    a1 = _mm_add_epi64(a1, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 16)));
    a2 = _mm_add_epi64(a2, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 32)));
    a3 = _mm_add_epi64(a3, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 48)));
  }
  const __m128i s = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
  alignas(16) uint64_t lanes[2];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), s);
  return lanes[0] + lanes[1];
}

bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
#elif defined(__aarch64__)
uint64_t sum_neon(const uint8_t* p, size_t n) {
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 64) {
    a0 = vaddq_u64(a0, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i)));
    a1 = vaddq_u64(a1, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 16)));
    a2 = vaddq_u64(a2, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 32)));
    a3 = vaddq_u64(a3, vld1q_u64(reinterpret_cast<const uint64_t*>(p + i + 48)));
  }
  const uint64x2_t s = vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3));
  return vgetq_lane_u64(s, 0) + vgetq_lane_u64(s, 1);
}
#endif

constexpr size_t kChunk = size_t(4) << 20;

}  // namespace

uint64_t read_sum(const uint8_t* p, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  return has_avx2() ? sum_avx2(p, n) : sum_sse2(p, n);
#elif defined(__aarch64__)
  return sum_neon(p, n);
#else
  uint64_t s = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    s += v;
  }
  return s;
#endif
}

const char* read_sum_kind() {
#if defined(__x86_64__) || defined(__i386__)
  return has_avx2() ? "avx2" : "sse2";
#elif defined(__aarch64__)
  return "neon";
#else
  return "scalar";
#endif
}

HugeBuffer alloc_buffer(size_t bytes) {
  HugeBuffer buf(bytes);
  std::memset(buf.data(), 1, buf.size());
  return buf;
}

double read_once(ThreadPool& pool, const uint8_t* p, size_t bytes) {
  std::atomic<uint64_t> sink{0};
  const int64_t chunks = int64_t((bytes + kChunk - 1) / kChunk);
  const auto t0 = std::chrono::steady_clock::now();
  pool.parallel_for(chunks, [&](int64_t c0, int64_t c1) {
    uint64_t s = 0;
    for (int64_t c = c0; c < c1; ++c) {
      const size_t begin = size_t(c) * kChunk;
      const size_t len = bytes - begin < kChunk ? bytes - begin : kChunk;
      s += read_sum(p + begin, len & ~size_t(127));
    }
    sink.fetch_add(s, std::memory_order_relaxed);
  }, 1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink.load() == 42) std::fputs("", stderr);  // keep the sum alive
  return double(bytes) / s / 1e9;
}

}  // namespace r1pi::bench
