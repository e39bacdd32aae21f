// The generation loop on the rank that owns the prompt: prefill in batches, then choose and feed
// tokens until end-of-generation, the token budget or a full context. With speculative decoding a
// decode step feeds the last token and a draft in one forward and keeps the draft's longest prefix
// that the model itself picks, plus the model's pick after it: the same tokens as one at a time.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/token_source.h"
#include "sampling/sampler.h"
#include "specdec/speculator.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct GenerationOptions {
  int n_predict = -1;    // tokens to generate; -1: until end-of-generation or a full context
  int batch_size = 64;   // prompt tokens per prefill forward
  SamplerParams sampler;
  SpecOptions spec;      // speculative decoding (off unless spec.enabled)
  // Called after every decode step with a draft: its length and how many of it were accepted.
  std::function<void(int drafted, int accepted)> on_spec_step;
};

struct GenerationResult {
  std::vector<int32_t> generated;   // sampled ids, the end-of-generation id included
  int prefill_tokens = 0;
  double prefill_seconds = 0;
  int decode_tokens = 0;            // tokens chosen after the prefill's (one forward each without
                                    // speculation)
  double decode_seconds = 0;
  std::string stop_reason;          // "eog", "n_predict" or "context full"
  bool speculative = false;         // spec.enabled was set
  SpecStats spec;
  std::string spec_cost, spec_cost_origin;  // the cost curve used, in one line, and its source
};

// Checks that the prompt and the requested tokens fit the context; throws r1pi::Error if not.
void check_fits_context(size_t n_prompt, int n_predict, int n_ctx);

GenerationResult generate(TokenSource& model, const Tokenizer& tokenizer,
                          const std::vector<int32_t>& prompt, const GenerationOptions& options,
                          const std::function<void(const std::string&)>& on_text);

}  // namespace r1pi
