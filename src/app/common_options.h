// The options that r1pi and r1pi-perplexity (and, for --sync, r1pi-bench) take, added to a command line in one place: their
// names, values and help texts are the same in both programs, and each list of values is the
// table that the code using it reads.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "layers/kv_cache.h"
#include "model/model_fingerprint.h"
#include "runtime/run_options.h"

namespace r1pi {

// "a, b or c" of a table's names.
template <class Names>
std::string either_of(const Names& names) {
  std::string s;
  for (size_t i = 0; i < std::size(names); ++i) s += (i == 0 ? "" : i + 1 < std::size(names) ? ", " : " or ") + std::string(names[i]);
  return s;
}

inline void add_kv_type_option(CLI::App& app, RunOptions& o) {
  app.add_option("--kv-type", o.kv_type,
                 "KV cache type: " + either_of(kv_cache_type_names()) +
                     " (f32 exact, the default; the others a half or a quarter of the bytes, approximate)")
      ->check(CLI::IsMember(kv_cache_type_names()));
}

// r1pi-bench takes it too.
inline CLI::Option* add_sync_option(CLI::App& app, std::string& sync) {
  std::vector<std::string> choices(kSyncMethods.begin(), kSyncMethods.end());
  choices.insert(choices.begin(), kSyncAuto);
  return app.add_option("--sync", sync,
                        "how ranks combine partial sums: " + either_of(choices) +
                            " (auto: the fastest of the others, timed at start-up on the model's row)")
      ->check(CLI::IsMember(choices));
}

inline void add_rank_options(CLI::App& app, RunOptions& o) {
  const char* group = "multi-rank (mpirun) options";
  add_sync_option(app, o.sync)->group(group);
  app.add_flag("--weights-from-root", o.weights_from_root, "rank 0 reads the model and sends every rank its slices")
      ->group(group);
  app.add_flag("--check-ranks", o.check_ranks, "compare every layer's hidden state across ranks after each forward")
      ->group(group);
  app.add_option("--rank-timeout", o.rank_timeout, "seconds without progress from a rank before the job ends, naming it")
      ->check(CLI::Range(0.1, 1e6))->group(group);
  // weight_check throws r1pi::Error for another name: the parse reports it as any bad value.
  app.add_option_function<std::string>(
         "--verify-weights", [&o](const std::string& name) { o.verify_weights = weight_check(name); },
         std::string("how much of the model file every rank hashes to check that all opened the same one: ") +
             weight_check_names() + " (every byte: seconds to minutes)")
      ->default_str(weight_check_name(WeightCheck::Sampled))->group(group);
}

}  // namespace r1pi
