// A job of several ranks: every rank loads its shard (or receives it from rank 0), the ranks check
// they hold the same model, then rank 0 generates while the others follow its control messages.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/q8_0_sync.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"

namespace r1pi {

// Returns the process exit code (0, or 1 with the reason printed by rank 0).
// With options.session, rank 0 runs the session and then stops the workers.
int run_distributed(const RunOptions& options, const MpiWorld& world, const Session& session = {});

// The steps of run_distributed that r1pi-bench shares. Both are collectives.
// Every rank loads its shard of path (or receives it from rank 0); nothing when any rank failed or
// the ranks opened different files (rank 0 printed why); check: how much of its file each rank
// hashes to find that out (--verify-weights).
std::optional<LoadedModel> load_shards(const std::string& path, bool weights_from_root,
                                       const MpiWorld& world, const ShardWeights& weights = {},
                                       WeightCheck check = WeightCheck::Sampled);

// What one rank computes with: its threads, the partial-sum exchange, the forward pass and KV cache.
struct RankEngine {
  RankEngine(const LoadedModel& model, int n_ctx, int threads, SyncMethod sync_method, const MpiWorld& world,
             GgmlType kv_type, int n_seqs, int max_run);
  ThreadPool pool;
  Q8_0Sync sync;
  ModelForward forward;
};
// Null when any rank could not build its engine (rank 0 printed why). sync_method: --sync's value
// (auto: timed here, on every rank). kv_type: the KV cache's type (--kv-type; F32 is the exact path); n_seqs: its slots;
// max_run: ModelForward's (the prefill batch: -b).
std::unique_ptr<RankEngine> make_engine(const LoadedModel& model, int n_ctx, int threads,
                                        const std::string& sync_method, const MpiWorld& world,
                                        GgmlType kv_type = GgmlType::F32, int n_seqs = 1, int max_run = 0);

}  // namespace r1pi
