#include "runtime/mpi/rank_agreement.h"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "layers/kv_cache.h"
#include "runtime/mpi/q8_0_sync.h"
#include "runtime/mpi/rank_watchdog.h"

namespace r1pi {

bool all_succeeded(const MpiWorld& world, const std::string& error) {
  int failed = error.empty() ? 0 : 1, any = 0;
  complete("every rank's start-up result", [&](MPI_Request* r) {
    return MPI_Iallreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, r);
  });
  if (!any) return true;
  int len = int(error.size());
  std::vector<int> lens(size_t(world.size())), offsets(size_t(world.size()));
  complete("the ranks' error messages", [&](MPI_Request* r) {
    return MPI_Igather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, r);
  });
  std::string all;
  if (world.is_root()) {
    for (int r = 0, off = 0; r < world.size(); off += lens[size_t(r)], ++r) offsets[size_t(r)] = off;
    all.resize(size_t(offsets.back() + lens.back()));
  }
  complete("the ranks' error messages", [&](MPI_Request* r) {
    return MPI_Igatherv(error.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(),
                        MPI_CHAR, 0, MPI_COMM_WORLD, r);
  });
  if (world.is_root()) {
    std::string previous;
    for (int r = 0; r < world.size(); ++r) {
      const std::string e = all.substr(size_t(offsets[size_t(r)]), size_t(lens[size_t(r)]));
      // Identical failures (the same bad flag on every rank) are reported once.
      if (!e.empty() && e != previous) std::fprintf(stderr, "error: rank %d: %s\n", r, e.c_str());
      if (!e.empty()) previous = e;
    }
  }
  return false;
}

namespace {

// An option every rank must share, as an int for one MPI_Allgather; flag and how a value reads.
struct SharedOption {
  const char* flag;
  int32_t (*value)(const RunOptions&);
  std::string (*show)(int32_t);
};

std::string on_off(int32_t v) { return v ? "on" : "off"; }

// Each of these changes which collectives a rank runs (or, for the context, which control
// messages it accepts): ranks that differ would wait for each other forever.
const SharedOption kSharedOptions[] = {
    {"--sync",
     [](const RunOptions& o) { return int32_t(o.sync == kSyncAuto ? kSyncMethods.size() : size_t(parse_sync_method(o.sync))); },
     [](int32_t v) { return std::string(size_t(v) < kSyncMethods.size() ? kSyncMethods[size_t(v)] : kSyncAuto); }},
    {"--weights-from-root", [](const RunOptions& o) { return int32_t(o.weights_from_root); }, on_off},
    {"--check-ranks", [](const RunOptions& o) { return int32_t(o.check_ranks); }, on_off},
    // (ranks that hash different spans of one file would find their fingerprints different)
    {"--verify-weights", [](const RunOptions& o) { return int32_t(o.verify_weights); },
     [](int32_t v) { return std::string(weight_check_name(WeightCheck(v))); }},
    {"-c/--ctx-size", [](const RunOptions& o) { return int32_t(o.ctx_size); },
     [](int32_t v) { return v ? std::to_string(v) : std::string("the default"); }},
    // A worker outside a session would give up on an idle chat or server after --rank-timeout.
    {"--chat/--serve", [](const RunOptions& o) { return int32_t(o.session); }, on_off},
    {"--parallel", [](const RunOptions& o) { return int32_t(o.parallel); }, [](int32_t v) { return std::to_string(v); }},
    // (not a collective, but ranks with different caches would hold different hidden states)
    {"--kv-type", [](const RunOptions& o) { return int32_t(&kv_cache_type_named(o.kv_type) - kKvCacheTypes); },
     [](int32_t v) { return std::string(kKvCacheTypes[v].name); }},
};
constexpr int kShared = int(sizeof kSharedOptions / sizeof kSharedOptions[0]);

// Collective: true when every rank was given rank 0's value of each shared option; rank 0 names
// each option and rank that differs.
bool same_shared_options(const MpiWorld& world, const RunOptions& mine) {
  int32_t values[kShared];
  for (int i = 0; i < kShared; ++i) values[i] = kSharedOptions[i].value(mine);
  std::vector<int32_t> all(size_t(kShared) * size_t(world.size()));
  complete("every rank's options", [&](MPI_Request* r) {
    return MPI_Iallgather(values, kShared, MPI_INT32_T, all.data(), kShared, MPI_INT32_T,
                          MPI_COMM_WORLD, r);
  });
  bool same = true;
  for (int r = 1; r < world.size(); ++r)
    for (int i = 0; i < kShared; ++i) {
      const int32_t root_value = all[size_t(i)], value = all[size_t(r * kShared + i)];
      if (value == root_value) continue;
      same = false;
      if (world.is_root())
        std::fprintf(stderr,
                     "error: rank %d was started with %s %s, rank 0 with %s: rank 0's options are "
                     "the job's, give every rank the same\n",
                     r, kSharedOptions[i].flag, kSharedOptions[i].show(value).c_str(),
                     kSharedOptions[i].show(root_value).c_str());
    }
  return same;
}

}  // namespace

std::optional<int> start_job(const MpiWorld& world, const RunOptions& mine, const std::string& error,
                             bool help) {
  int root_help = help ? 1 : 0;
  complete("rank 0's start", [&](MPI_Request* r) {
    return MPI_Ibcast(&root_help, 1, MPI_INT, 0, MPI_COMM_WORLD, r);
  });
  if (root_help) return 0;  // rank 0 printed the help: there is no job to run
  const std::string why = help ? "--help was given on this rank but not on rank 0" : error;
  if (!all_succeeded(world, why)) return 1;
  if (!same_shared_options(world, mine)) return 1;
  // A board's own --rank-timeout would not stop the job anyway: the others wait on their own.
  double timeout = mine.rank_timeout;
  complete("rank 0's --rank-timeout", [&](MPI_Request* r) {
    return MPI_Ibcast(&timeout, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
  });
  set_rank_timeout(timeout);
  return std::nullopt;
}

}  // namespace r1pi
