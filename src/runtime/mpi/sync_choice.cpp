#include "runtime/mpi/sync_choice.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "runtime/mpi/rank_watchdog.h"
#include "runtime/run_options.h"

namespace r1pi {

namespace {

// Timed rounds per method, after one that is not: about 75 syncs, well under 0.1 s on boards
// (0.25 ms a sync in the 4x Pi 5 record) and on the emulated network.
constexpr int kRounds = 24;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

SyncMethod resolve_sync_method(const std::string& name, const MpiWorld& world, int64_t row) {
  if (name != kSyncAuto) return parse_sync_method(name);
  constexpr size_t kMethods = kSyncMethods.size();
  std::array<std::unique_ptr<Q8_0Sync>, kMethods> syncs;
  for (size_t m = 0; m < kMethods; ++m) syncs[m] = std::make_unique<Q8_0Sync>(SyncMethod(m), world.rank(), world.size());
  std::array<std::vector<double>, kMethods> seconds;
  std::vector<float> x(static_cast<size_t>(row));
  // Rounds go method after method, so that a burst of noise falls on all of them alike.
  for (int round = -1; round < kRounds; ++round)
    for (size_t m = 0; m < kMethods; ++m) {
      for (int64_t i = 0; i < row; ++i) x[size_t(i)] = float((i * 7 + world.rank()) % 13) - 6.0f;
      const auto start = std::chrono::steady_clock::now();
      syncs[m]->reduce_sum(x.data(), 1, row);
      if (round >= 0) seconds[m].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  // A sync is as slow as its slowest rank; after the max every rank holds the same numbers, so
  // every rank picks the same method.
  std::array<double, kMethods> slowest{};
  for (size_t m = 0; m < kMethods; ++m) slowest[m] = median(seconds[m]);
  complete("the sync methods' times", [&](MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, slowest.data(), int(kMethods), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, r);
  });
  const size_t best = size_t(std::min_element(slowest.begin(), slowest.end()) - slowest.begin());
  if (world.is_root()) {
    std::string times;
    for (size_t m = 0; m < kMethods; ++m) {
      char t[64];
      std::snprintf(t, sizeof t, "%s%s %.3f ms", m ? ", " : "", kSyncMethods[m], 1e3 * slowest[m]);
      times += t;
    }
    std::fprintf(stderr, "sync: auto chose %s (per sync of %lld values, the slowest rank's median of %d: %s)\n",
                 kSyncMethods[best], static_cast<long long>(row), kRounds, times.c_str());
  }
  return SyncMethod(best);
}

}  // namespace r1pi
