#include "runtime/read_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "common/huge_buffer.h"
#include "common/thread_pool.h"

namespace r1pi {

double measure_read_bandwidth(int threads) {
  constexpr size_t kBytes = size_t(128) << 20, kChunk = size_t(4) << 20;
  HugeBuffer buffer(kBytes);
  std::memset(buffer.data(), 1, kBytes);  // real pages, not the shared zero page
  ThreadPool pool(threads);
  std::atomic<uint64_t> sink{0};
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(int64_t(kBytes / kChunk), [&](int64_t begin, int64_t end) {
      // Four independent sums of 64-bit words: the loads, not the adds, set the pace.
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      const uint64_t* p = reinterpret_cast<const uint64_t*>(buffer.data() + size_t(begin) * kChunk);
      const uint64_t* e = reinterpret_cast<const uint64_t*>(buffer.data() + size_t(end) * kChunk);
      for (; p < e; p += 4) s0 += p[0], s1 += p[1], s2 += p[2], s3 += p[3];
      sink += s0 + s1 + s2 + s3;
    }, 1);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, kBytes / seconds / 1e9);
  }
  return best;
}

}  // namespace r1pi
