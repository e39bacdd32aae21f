// The pool's contract: every index of [0, n) handed out exactly once, in ranges no shorter than the
// chunk asked for (except the last), for any thread count; the long-first (guided) chunks included.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "common/thread_pool.h"

namespace r1pi {
namespace {

TEST(ThreadPool, RangesCoverEachIndexOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 7, 16, 100, 1000, 14336}) {
      for (int64_t chunk : {0, 1, 5, 16, 448}) {
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        std::mutex m;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        pool.parallel_for(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
          std::lock_guard<std::mutex> lock(m);
          ranges.emplace_back(b, e);
        }, chunk);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(seen[size_t(i)].load(), 1) << "threads " << threads << " n " << n << " i " << i;
        std::sort(ranges.begin(), ranges.end());
        for (size_t r = 0; r < ranges.size(); ++r) {
          EXPECT_LT(ranges[r].first, ranges[r].second);
          if (chunk > 0 && ranges[r].second < n) {
            EXPECT_GE(ranges[r].second - ranges[r].first, chunk) << "n " << n << " chunk " << chunk;
          }
        }
      }
    }
  }
}

TEST(ThreadPool, LongChunksFirst) {
  ThreadPool pool(2);
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.parallel_for(6400, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  }, 100);
  std::sort(ranges.begin(), ranges.end());
  ASSERT_GE(ranges.size(), 3u);
  EXPECT_EQ(ranges.front().second - ranges.front().first, 6400 / 4);  // half of an even share
  EXPECT_EQ(ranges.back().second, 6400);
  for (size_t r = 1; r < ranges.size(); ++r)
    EXPECT_LE(ranges[r].second - ranges[r].first, ranges[r - 1].second - ranges[r - 1].first);
}

// What every forward pass relies on: plain (non-atomic) writes made in fn are visible to the caller
// once parallel_for returns, and the caller's plain writes before it to every thread in fn, job
// after job. Under ThreadSanitizer (scripts/sanitize tsan) a missing happens-before fails here.
TEST(ThreadPool, PlainDataHandedOverBothWays) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    std::vector<int64_t> in(4096), out(4096);
    for (int job = 0; job < 60; ++job) {
      const int64_t n = 1 + (job * 37) % 4096;
      for (int64_t i = 0; i < n; ++i) in[size_t(i)] = i * 3 + job;
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[size_t(i)] = in[size_t(i)] + 1;
      }, job % 3 == 0 ? 1 : 0);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(i)], i * 3 + job + 1) << "job " << job;
    }
  }
}

// Pools made and destroyed in a row, some without a job: workers that start late or sleep must
// still see the stop.
TEST(ThreadPool, CreateRunDestroyRepeatedly) {
  for (int round = 0; round < 50; ++round) {
    ThreadPool pool(1 + round % 4);
    int64_t sum = 0;
    std::mutex m;
    if (round % 2 == 0)
      pool.parallel_for(100, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(m);
        for (int64_t i = b; i < e; ++i) sum += i;
      });
    EXPECT_EQ(sum, round % 2 == 0 ? 4950 : 0);
  }
}

}  // namespace
}  // namespace r1pi
