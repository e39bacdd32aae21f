#include "runtime/mpi/shard_weights.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/error.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_watchdog.h"
#include "runtime/read_bandwidth.h"

namespace r1pi {

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
