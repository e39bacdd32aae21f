// The two roles of a multi-rank job. Rank 0 owns the prompts: before every forward pass (and every
// change to the KV cache's slots) it broadcasts a ControlMessage, runs its own shard, then leads
// the choice of the token after each batch entry that asks for one. The other ranks loop over
// those messages and run their shards until told to stop.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "layers/model_forward.h"
#include "runtime/mpi/control_message.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/q8_0_sync.h"
#include "runtime/step_timings.h"
#include "runtime/token_source.h"

namespace r1pi {

struct RankOptions {
  bool check_ranks = false;   // compare every layer's hidden state across ranks after each forward
  bool timings = false;       // per-token Pred/Sync lines on rank 0
  bool timings_all = false;   // the same from every rank
  bool session = false;       // a chat or server session: workers wait for rank 0 without a limit
                              // between forwards (rank 0 still times out waiting for them)
};

// Per-forward bookkeeping shared by both roles: timings and the hidden-state comparison.
class RankMonitor {
 public:
  RankMonitor(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world, const RankOptions& options);
  void begin();
  // After the forward (and the token choice): prints timings, compares hidden states (a
  // collective when check_ranks is on: every rank calls it after every forward).
  void end(int B, double extra_sync_seconds);
  int checked_forwards() const { return checked_; }
  // What the last forward (begin to end) cost this rank.
  const StepCost& last_cost() const { return last_; }

 private:
  Q8_0Sync& sync_;
  const MpiWorld& world_;
  RankOptions options_;
  uint64_t digest_ = 0;
  int checked_ = 0;
  double start_ = 0;
  SyncStats before_;
  StepCost last_;
};

class RootTokenSource final : public TokenSource {
 public:
  RootTokenSource(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world,
                  const RankOptions& options);
  int n_ctx() const override { return model_.n_ctx(); }
  int n_seqs() const override { return model_.n_seqs(); }
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) override;
  std::vector<float> logits(const Batch& batch) override;
  const std::vector<int32_t>& cached(int seq) const override { return model_.cache().tokens(seq); }
  bool resumable(int seq, int n) const override { return model_.cache().resumable(seq, n); }
  void truncate(int seq, int n) override;
  void copy(int src, int dst) override;
  // Sends the other ranks out of their loop; status 1 tells them rank 0 failed.
  void stop(uint16_t status);
  int checked_forwards() const { return monitor_.checked_forwards(); }
  const StepCost& last_cost() const { return monitor_.last_cost(); }

 private:
  // Sends the batch as entries say, runs rank 0's shard, then the picks (samplers) or the whole
  // rows (into *rows) of the entries that ask.
  std::vector<int32_t> run(const Batch& batch, const std::vector<BatchEntry>& entries,
                           const std::vector<const Sampler*>* samplers, std::vector<float>* rows);
  ModelForward& model_;
  const MpiWorld& world_;
  RankMonitor monitor_;
};

// Runs control messages until Stop; returns the stop status (0 normal, 1 rank 0 failed).
int run_worker(ModelForward& model, Q8_0Sync& sync, const MpiWorld& world, const RankOptions& options);

}  // namespace r1pi
