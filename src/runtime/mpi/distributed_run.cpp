#include "runtime/mpi/distributed_run.h"

#include <mpi.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <memory>
#include <optional>
#include <string>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/model_fingerprint.h"
#include "model/weight_slices.h"
#include "runtime/mpi/q8_0_sync.h"
#include "runtime/mpi/sync_choice.h"
#include "runtime/mpi/shard_weights.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_roles.h"
#include "runtime/mpi/rank_watchdog.h"
#include "runtime/mpi/weights_from_root.h"
#include "runtime/stop_signals.h"
#include "runtime/run_steps.h"
#include "common/thread_pool.h"

namespace r1pi {

namespace {

// Collective: true when every rank opened the same model file.
bool same_model_everywhere(const MpiWorld& world, const Fingerprint& mine) {
  std::vector<Fingerprint> all(size_t(world.size()));
  complete("the ranks' model fingerprints", [&](MPI_Request* r) {
    return MPI_Iallgather(mine.data(), int(mine.size()), MPI_BYTE, all.data(), int(mine.size()),
                          MPI_BYTE, MPI_COMM_WORLD, r);
  });
  bool same = true;
  for (const Fingerprint& f : all) same = same && f == all[0];
  if (!same && world.is_root()) {
    std::fprintf(stderr, "error: the ranks opened different model files (fingerprints:");
    for (int r = 0; r < world.size(); ++r)
      std::fprintf(stderr, " rank %d %s", r, to_hex(all[size_t(r)], 8).c_str());
    std::fprintf(stderr, "); give every rank the same GGUF file, or use --weights-from-root\n");
  }
  return same;
}

// Rank 0 prints where the memory went on every rank.
void report_ranks(const MpiWorld& world, const LoadedModel& model, uint64_t kv_bytes) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double mine[3] = {model.weights.total_bytes() / 1e6, kv_bytes / 1e6, usage.ru_maxrss / 1e3};
  std::vector<double> all(size_t(3 * world.size()));
  complete("the ranks' memory figures", [&](MPI_Request* r) {
    return MPI_Igather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
  });
  if (!world.is_root()) return;
  for (int r = 0; r < world.size(); ++r)
    std::fprintf(stderr, "rank %d: shard %.1f MB, KV cache %.1f MB, peak RSS %.1f MB\n", r,
                 all[size_t(3 * r)], all[size_t(3 * r + 1)], all[size_t(3 * r + 2)]);
}

}  // namespace

std::optional<LoadedModel> load_shards(const std::string& path, bool weights_from_root,
                                       const MpiWorld& world, const ShardWeights& weights, WeightCheck check) {
  if (weights_from_root) return load_from_root(path, world, weights);
  std::optional<LoadedModel> loaded;
  Fingerprint fingerprint{};
  std::string error;
  try {
    GgufFile file = GgufFile::open(path);
    // The sampled fingerprint keys the cost cache whatever the check: --verify-weights full
    // compares every byte, but the model is the same one.
    const Fingerprint sampled = model_fingerprint(file);
    fingerprint = check == WeightCheck::Sampled ? sampled : model_fingerprint(file, check);
    loaded = describe_model(file, world.rank(), world.size(), weights);
    loaded->fingerprint = sampled;
    MappedSliceSource source(file);
    load_weights(*loaded, file, source, world.is_root());
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory loading this rank's shard of " + path;
  }
  if (!all_succeeded(world, error)) return std::nullopt;
  if (!same_model_everywhere(world, fingerprint)) return std::nullopt;
  return loaded;
}

RankEngine::RankEngine(const LoadedModel& model, int n_ctx, int threads, SyncMethod sync_method,
                       const MpiWorld& world, GgmlType kv_type, int n_seqs, int max_run)
    : pool(threads),
      sync(sync_method, world.rank(), world.size()),
      forward(model.config, model.weights, model.shard, n_ctx, pool, sync, kv_type, n_seqs, kernels(), max_run) {}

std::unique_ptr<RankEngine> make_engine(const LoadedModel& model, int n_ctx, int threads,
                                        const std::string& sync_method, const MpiWorld& world,
                                        GgmlType kv_type, int n_seqs, int max_run) {
  const SyncMethod method = resolve_sync_method(sync_method, world, int64_t(model.config.dim));
  // A rank that could not allocate its KV cache must not leave the others waiting for it.
  std::unique_ptr<RankEngine> engine;
  std::string error;
  try {
    engine = std::make_unique<RankEngine>(model, n_ctx, threads, method, world, kv_type, n_seqs, max_run);
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory for the KV cache of " + std::to_string(n_ctx) +
            " positions and the work buffers (lower -c/--ctx-size)";
  }
  if (!all_succeeded(world, error)) return nullptr;
  return engine;
}

int run_distributed(const RunOptions& o, const MpiWorld& world, const Session& session) {
  const int n_ranks = world.size();
  const auto start = std::chrono::steady_clock::now();

  // ---- the plan's weights, then every rank loads its shard; all agree that all succeeded ----
  const std::optional<ShardWeights> weights = agree_shard_weights(o.shard_weights, o.threads, world);
  if (!weights) return 1;
  std::optional<LoadedModel> loaded = load_shards(o.model_path, o.weights_from_root, world, *weights, o.verify_weights);
  if (!loaded) return 1;
  LoadedModel& model = *loaded;
  // The plan decides the sums' rounding, so the sha256 belongs to it: shown whenever it is not even.
  if (world.is_root() && !weights->empty())
    std::fprintf(stderr, "plan: %s\n", describe_plan(model.config, n_ranks, *weights).c_str());
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // ---- every rank's engine; all agree that all have one before any control message ----
  const int n_ctx = context_size(o, model.config);
  const std::unique_ptr<RankEngine> engine =
      make_engine(model, n_ctx, o.threads, o.sync, world, kv_cache_type(o.kv_type), o.parallel, o.batch_size);
  if (!engine) return 1;
  ThreadPool& pool = engine->pool;
  Q8_0Sync& sync = engine->sync;
  ModelForward& forward = engine->forward;
  const RankOptions rank_options{o.check_ranks, o.timings, o.timings_all, o.session};

  if (!world.is_root()) {
    const int status = run_worker(forward, sync, world, rank_options);
    if (status == 0) report_ranks(world, model, forward.kv_cache_bytes());
    return status;
  }

  // ---- rank 0: the prompt, generation, the summary ----
  RootTokenSource source(forward, sync, world, rank_options);
  if (o.session) {
    print_banner(model, o, n_ctx, pool.size(), n_ranks, load_seconds, forward.kv_cache_bytes());
    int status = 1;
    try {
      status = run_session(session, source, [&] { return source.last_cost(); }, o.timings_csv, model, n_ctx,
                           generation_options(o, model, source, n_ranks, pool.size()));
    } catch (...) {
      source.stop(1);
      throw;
    }
    source.stop(uint16_t(status == 0 ? 0 : 1));
    if (status == 0) report_ranks(world, model, forward.kv_cache_bytes());  // workers report only then
    return status;
  }
  std::vector<int32_t> prompt;
  try {
    prompt = prepare_prompt(o, *model.tokenizer, n_ctx);
  } catch (const Error& e) {
    source.stop(1);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  print_banner(model, o, n_ctx, pool.size(), n_ranks, load_seconds, forward.kv_cache_bytes());
  const GenerationOptions gen =
      generation_options(o, model, source, n_ranks, pool.size());
  const GenerationResult result =
      run_generation(source, [&] { return source.last_cost(); }, gen, o.stop, o.timings_csv, *model.tokenizer, prompt);
  source.stop(0);
  print_summary(result);
  const SyncStats& s = sync.stats();
  std::fprintf(stderr, "sync: %s of Q8_0 partial sums, %d calls, %.3f ms per call, %.1f kB sent per call\n",
               kSyncMethods[size_t(sync.method())], s.calls, s.calls ? 1e3 * s.seconds / s.calls : 0.0,
               s.calls ? s.sent / 1e3 / s.calls : 0.0);
  if (o.check_ranks)
    std::fprintf(stderr, "ranks: hidden states identical after every layer on all %d ranks (%d forwards)\n",
                 n_ranks, source.checked_forwards());
  report_ranks(world, model, forward.kv_cache_bytes());
  return exit_status_after_signals();
}

}  // namespace r1pi
