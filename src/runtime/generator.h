// The generation loop on the rank that owns the prompt: prefill in batches, then sample and feed
// one token at a time until end-of-generation, the token budget or a full context.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/token_source.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct GenerationOptions {
  int n_predict = -1;    // tokens to generate; -1: until end-of-generation or a full context
  int batch_size = 64;   // prompt tokens per prefill forward
  SamplerParams sampler;
  bool ignore_eos = false;  // go on past end-of-generation tokens (benchmarks: a fixed length)
  // Prompt tokens whose keys and values are already in the model's cache, at positions 0 ..
  // n_cached - 1 (a prompt cache: a chat turn or a request that extends the previous one). The
  // prefill starts at position n_cached; at least the last prompt token is always fed, since its
  // logits choose the first token. 0: the whole prompt is fed.
  int n_cached = 0;
  // Asked before every decode forward: true ends the generation (stop_reason "cancelled"), so a
  // closed connection, a stop string or Ctrl-C costs at most the token already being computed.
  std::function<bool()> cancelled{};
};

struct GenerationResult {
  std::vector<int32_t> generated;   // sampled ids, the end-of-generation id included
  int prefill_tokens = 0;
  double prefill_seconds = 0;
  int decode_tokens = 0;            // single-token forward passes after the prefill
  double decode_seconds = 0;
  std::string stop_reason;          // "eog", "n_predict", "context full" or "cancelled"
};

// Checks that the prompt and the requested tokens fit the context; throws r1pi::Error if not.
void check_fits_context(size_t n_prompt, int n_predict, int n_ctx);

GenerationResult generate(TokenSource& model, const Tokenizer& tokenizer,
                          const std::vector<int32_t>& prompt, const GenerationOptions& options,
                          const std::function<void(const std::string&)>& on_text);

}  // namespace r1pi
