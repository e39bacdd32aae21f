// Per-forward timings of a generation: what each forward pass cost (Pred: compute, Sync: waiting
// for and exchanging with the other ranks) and the bytes it moved, for `r1pi --timings FILE.csv`
// and for r1pi-bench. The generation loop stays unaware: a token source is wrapped.
#pragma once
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "runtime/token_source.h"

namespace r1pi {

struct StepCost {
  double pred_seconds = 0;
  double sync_seconds = 0;
  uint64_t sent = 0;       // bytes this rank sent to the others
  uint64_t received = 0;   // bytes it received from them
};

struct Step {
  int pos = 0;      // position of the forward's first token (in its sequence)
  int tokens = 0;   // tokens fed in this forward
  StepCost cost;
  int accepted = 0;  // a speculative verification's drafts (tokens[1..]) that the model accepted
};

// Forwards to `inner` and reports every forward to on_step. last_cost says what the inner source's
// last forward cost (a multi-rank source knows its Sync share); without it the forward's wall time
// is all Pred (one rank exchanges nothing).
class TimedTokenSource final : public TokenSource {
 public:
  TimedTokenSource(TokenSource& inner, std::function<void(const Step&)> on_step,
                   std::function<StepCost()> last_cost = {});
  int n_ctx() const override { return inner_.n_ctx(); }
  int n_seqs() const override { return inner_.n_seqs(); }
  // A verification (one sequence, a pick after every token): its step also counts the accepted
  // drafts, by the generation loop's own rule (the longest run of drafts equal to the picks
  // before them).
  std::vector<int32_t> forward(const Batch& batch, const std::vector<const Sampler*>& samplers) override;
  std::vector<float> logits(const Batch& batch) override;
  const std::vector<int32_t>& cached(int seq) const override { return inner_.cached(seq); }
  bool resumable(int seq, int n) const override { return inner_.resumable(seq, n); }
  void truncate(int seq, int n) override { inner_.truncate(seq, n); }
  void copy(int src, int dst) override { inner_.copy(src, dst); }

 private:
  // The forward's step (its cost from last_cost, else the wall time since start).
  Step step(const Batch& batch, std::chrono::steady_clock::time_point start) const;
  TokenSource& inner_;
  std::function<void(const Step&)> on_step_;
  std::function<StepCost()> last_cost_;
};

// One CSV row per forward: pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted, written
// through a temporary (common/atomic_file.h) that close() puts in place. Throws r1pi::Error when
// the file cannot be written: at once for the header, on write() for a row that fails, and on
// close() for what the buffer still held (the destructor removes the temporary without a word).
class TimingsCsv {
 public:
  explicit TimingsCsv(const std::string& path);
  void write(const Step& step, bool flush = false);  // flush: to the file now, not when the buffer fills
  void close();

 private:
  [[noreturn]] void fail(int err);  // drops the file and throws, naming it and the error
  std::string path_;
  std::optional<AtomicFile> out_;
};

}  // namespace r1pi
