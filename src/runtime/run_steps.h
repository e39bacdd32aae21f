// The steps of a run that do not depend on the rank count (context size, the prompt, what is printed
// before, during and after generation), which distributed_run shares, and the single-rank run.
#pragma once
#include <cstdint>
#include <vector>

#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/run_options.h"

namespace r1pi {

int context_size(const RunOptions& options, const LlamaConfig& config);
// Tokenises the prompt and checks it (and -n) fits the context; throws r1pi::Error.
std::vector<int32_t> prepare_prompt(const RunOptions& options, const Tokenizer& tokenizer, int n_ctx);
void print_banner(const LoadedModel& model, const RunOptions& options, int n_ctx, int threads,
                  int n_ranks, double load_seconds, uint64_t kv_bytes);
// Streams generated text to stdout as it comes.
void print_text(const std::string& text);
void print_summary(const GenerationResult& result);

// The whole job on this process (one rank).
int run_single_rank(const RunOptions& options);

}  // namespace r1pi
