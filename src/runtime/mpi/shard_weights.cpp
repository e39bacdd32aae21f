#include "runtime/mpi/shard_weights.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/huge_buffer.h"
#include "common/thread_pool.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_watchdog.h"

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

std::optional<ShardWeights> agree_shard_weights(const std::string& given, int threads, const MpiWorld& world) {
  if (given.empty()) return ShardWeights{};
  const int n = world.size();
  ShardWeights weights(size_t(n), 0.0);
  std::string error;
  if (given == "auto") {
    // One decimal, so that the printed list gives the same plan when passed back.
    double mine = std::max(0.1, std::round(measure_read_bandwidth(threads) * 10) / 10);
    complete("every rank's read bandwidth", [&](MPI_Request* r) {
      return MPI_Iallgather(&mine, 1, MPI_DOUBLE, weights.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD, r);
    });
  } else if (world.is_root()) {
    try {
      weights = parse_shard_weights(given, n);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  if (!all_succeeded(world, error)) return std::nullopt;
  complete("rank 0's shard weights", [&](MPI_Request* r) {
    return MPI_Ibcast(weights.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
  });
  if (world.is_root()) {
    std::string list;
    for (double w : weights) {
      char text[32];
      std::snprintf(text, sizeof text, "%s%g", list.empty() ? "" : ",", w);
      list += text;
    }
    std::fprintf(stderr, "shard weights: %s%s\n", list.c_str(),
                 given == "auto" ? " (each rank's read GB/s; --shard-weights with this list repeats the plan)" : "");
  }
  return weights;
}

}  // namespace r1pi
