// The steps of a run that do not depend on the rank count (context size, the prompt, what is printed
// before, during and after generation), which distributed_run shares, and the single-rank run.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/run_options.h"
#include "runtime/token_source.h"
#include "runtime/step_timings.h"

namespace r1pi {

int context_size(const RunOptions& options, const ModelConfig& config);
// Tokenises the prompt and checks it (and -n) fits the context; throws r1pi::Error.
std::vector<int32_t> prepare_prompt(const RunOptions& options, const Tokenizer& tokenizer, int n_ctx);
void print_banner(const LoadedModel& model, const RunOptions& options, int n_ctx, int threads,
                  int n_ranks, double load_seconds, uint64_t kv_bytes);
// Streams generated text to stdout as it comes.
void print_text(const std::string& text);
void print_summary(const GenerationResult& result);
// Generates from the prompt as gen says, streaming the text up to the first of the stop texts
// (-r; the result's ids end with the token that completed it); with a timings_csv file (--timings
// FILE) it writes one row per forward there, with the cost last_cost reports (empty: the wall
// time is all Pred).
GenerationResult run_generation(TokenSource& source, const std::function<StepCost()>& last_cost,
                                const GenerationOptions& gen, const std::vector<std::string>& stop,
                                const std::string& timings_csv, const Tokenizer& tokenizer,
                                const std::vector<int32_t>& prompt);

// What rank 0 runs in place of the one prompt when options.session is set (a chat, a server): it
// drives the engine through the token source for as long as it likes and returns the exit code.
// It lives above the runtime (src/chat, src/server), hence a function rather than a call here.
// defaults: the generation options of the command line (-n, -b, sampling, --spec and its cost
// curve), which a session starts every generation from.
using Session = std::function<int(TokenSource& source, const LoadedModel& model, int n_ctx,
                                  const GenerationOptions& defaults)>;

// Runs the session on source; with a timings_csv file (--timings FILE) every forward of every turn
// or request is a row there (written at once), with the cost last_cost reports, as in run_generation.
int run_session(const Session& session, TokenSource& source, const std::function<StepCost()>& last_cost,
                const std::string& timings_csv, const LoadedModel& model, int n_ctx, const GenerationOptions& gen);

// The generation options of a run: sampling, the budget and, with --spec, the drafter's settings
// and the cost curve (from --spec-cost, the cache, or measured now through source). Only --spec
// needs the model's fingerprint (it keys the cached curve): model's when loading computed it, else
// read from the file.
GenerationOptions generation_options(const RunOptions& options, const LoadedModel& model, TokenSource& source,
                                     int n_ranks, int threads);

// The whole job on this process (one rank).
int run_single_rank(const RunOptions& options, const Session& session = {});

}  // namespace r1pi
