// Continuous batching: several generations, each on its own thread and KV cache slot, share one
// engine. Each runs the ordinary generation loop (generate(), with its prompt cache and
// speculative drafts) on a SlotSource; the source's calls wait here until the engine's thread
// (the only one that may run forwards: rank 0's main thread, which speaks MPI) has a call from
// every generation, then run as one batch: each member's tokens are one run of its own sequence.
// A new request's prompt goes in chunks of its batch size (-b), so running streams wait at most
// one chunk's forward for it.
//
// The kernels compute every row alike in any batch and every sampled pick is a function of its
// row, seed and position, so each generation's tokens are those it would get alone.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/token_source.h"

namespace r1pi {

class ForwardBatcher {
 public:
  explicit ForwardBatcher(TokenSource& engine) : engine_(engine) {}

  // The engine's thread: counts a generation in before its thread starts (the next batch waits for
  // its first call), and out once it has made its last call.
  void join();
  void leave();
  int members();

  // A generation's thread: runs the call with the others' and returns when it is done (what the
  // engine threw is thrown here as Error).
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers);
  void truncate(int seq, int n);
  void copy(int src, int dst);

  // The engine's thread: once every member has a call waiting (or after `wait` with at least one),
  // runs the slot changes, then every forward as one batch. False when no call came.
  bool run(std::chrono::milliseconds wait);

  struct Stats {
    uint64_t forwards = 0;   // batches run
    uint64_t sequences = 0;  // generations' forwards in them (sequences / forwards: the mean batch)
    uint64_t tokens = 0;     // tokens fed
  };
  Stats stats();

 private:
  struct Call {
    enum Kind { Forward, Truncate, Copy } kind = Forward;
    const Batch* batch = nullptr;
    const std::vector<const Sampler*>* samplers = nullptr;
    int seq = 0, n = 0, src = 0;
    std::vector<int32_t> picks{};
    std::string error{};
    bool done = false;
  };
  void wait_for(Call& call);
  void run_forwards(const std::vector<Call*>& calls);

  TokenSource& engine_;
  std::mutex mutex_;
  std::condition_variable called_, answered_;
  std::vector<Call*> pending_;
  int members_ = 0;
  Stats stats_;
};

// TokenSource for one generation: its slot's state from the engine, its calls through the batcher.
// While other generations run, a batch longer than `chunk` tokens goes in calls of `chunk` (the
// others' tokens wait one such forward, not a whole prefill batch); alone, whole. Each row's pick
// depends on its own logits only, so the split changes no token.
class SlotSource final : public TokenSource {
 public:
  SlotSource(ForwardBatcher& batcher, TokenSource& engine, int chunk = 0)
      : batcher_(batcher), engine_(engine), chunk_(chunk) {}
  int n_ctx() const override { return engine_.n_ctx(); }
  int n_seqs() const override { return engine_.n_seqs(); }
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) override;
  // Its own slot only: the engine changes other slots meanwhile, never this one between its calls.
  const std::vector<int32_t>& cached(int seq) const override { return engine_.cached(seq); }
  bool resumable(int seq, int n) const override { return engine_.resumable(seq, n); }
  void truncate(int seq, int n) override { batcher_.truncate(seq, n); }
  void copy(int src, int dst) override { batcher_.copy(src, dst); }

 private:
  ForwardBatcher& batcher_;
  TokenSource& engine_;
  int chunk_;  // 0: never split
};

}  // namespace r1pi
