// Everything `r1pi` was asked to do, as parsed from its command line (the same on every rank).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model_fingerprint.h"
#include "sampling/sampler.h"
#include "sampling/token_constraint.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

// The default --rank-timeout in seconds. The longest silence of a healthy job is loading: a rank
// that has its shard waits for the slowest board to map or receive its own (with
// --weights-from-root, for rank 0 to read and send every earlier rank's slices first), minutes for
// the 8B from SD cards. Every step after that (a prefill batch, a sync) is far shorter.
inline constexpr double kDefaultRankTimeout = 300;

// --sync's methods, in the order of SyncMethod (src/runtime/mpi/q8_0_sync.h), whose place is
// also the number ranks compare (auto's: after them). The default, auto, is the fastest of them
// on the job's ranks, timed at start-up (src/runtime/mpi/sync_choice.h).
inline constexpr std::array<const char*, 3> kSyncMethods = {"allgather", "allreduce", "direct"};
inline constexpr const char* kSyncAuto = "auto";

struct RunOptions {
  std::string model_path;
  std::string prompt;          // the text (read from -f already)
  int n_predict = -1;
  SamplerParams sampler;       // seed already resolved
  int threads = 0;             // 0: the cores available
  int ctx_size = 0;            // 0: min(trained, 4096)
  int batch_size = 64;
  bool no_bos = false;
  bool session = false;        // --chat or --serve: rank 0 runs a session (Session) instead of -p
  int parallel = 1;            // --serve's slots: sequences decoded together, each with -c positions
  bool ignore_eos = false;     // generate past end-of-generation tokens
  std::vector<std::string> stop;  // -r: -p generation ends where one of these texts appears
  // --grammar / --json-schema: the rule the answer follows, made once the vocabulary is known
  // (empty: the answer is free).
  std::function<std::shared_ptr<const TokenConstraint>(const Tokenizer&)> constraint;
  // Speculative decoding (rank 0 drafts; see src/specdec).
  bool spec = false;  // off: where a batch costs as much as here it gains little (docs/speculative-decoding.md)
  int spec_max = 8;              // the longest draft
  int spec_min_ngram = 1;        // n-gram lengths the drafter matches
  int spec_max_ngram = 4;
  std::string spec_cost;         // c(B) from this file instead of the cache or a measurement
  std::string kv_type = "f32";     // the KV cache's type: f32 (exact), f16, q8_0
  // Multi-rank jobs.
  std::string sync = kSyncAuto;  // how partial sums are combined: one of kSyncMethods, or kSyncAuto
  bool weights_from_root = false;  // rank 0 reads the file and sends every rank its slices
  // How much of its file each rank hashes for the check that all opened the same model.
  WeightCheck verify_weights = WeightCheck::Sampled;
  std::string shard_weights;       // each rank's share: "" equal, "2,1,1", or "auto" (read bandwidth)
  bool check_ranks = false;        // compare every layer's hidden state across ranks
  bool timings = false;            // per-token Pred/Sync lines (rank 0)
  bool timings_all = false;        // ... from every rank
  std::string timings_csv;         // --timings FILE: rank 0 writes one CSV row per forward there
  double rank_timeout = kDefaultRankTimeout;  // seconds without word from a rank: the job ends
};

}  // namespace r1pi
