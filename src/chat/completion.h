// One answer from a prompt, as a chat front-end wants it: generated through the prompt cache,
// cut at stop strings, split into reasoning and content, handed over piece by piece. The terminal
// chat and the server share it, so the two give the same text for the same conversation.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chat/reasoning_split.h"
#include "runtime/generator.h"

namespace r1pi {

struct CompletionSettings {
  GenerationOptions generation;    // n_predict and the sampler (reuse_cache and cancelled are set here)
  std::vector<std::string> stop;   // stop strings, matched on the text
  ReasoningStart reasoning = ReasoningStart::None;  // how the answer splits (answer_start(), or None)
  std::function<bool()> cancelled; // asked before every token: a closed connection, Ctrl-C
  // Each chosen token's log-probabilities as it comes (generation.sampler.n_probs >= 0).
  std::function<void(const PickLogprobs&)> on_logprobs;
};

struct Completion {
  GenerationResult result;
  TextParts text;                  // the whole reasoning and content shown
  bool reasoned = false;           // the answer was inside a think block (from the start, or opened it)
  std::string finish_reason;       // "stop" (end of turn, a stop string), "length" or "cancelled"
  int prompt_tokens = 0;
  int cached_tokens = 0;           // prompt tokens taken from the cache
  std::vector<PickLogprobs> logprobs;  // each generated token's, when asked (sampler.n_probs >= 0)
  int completion_tokens() const { return int(result.generated.size()); }
};

// The -n a generation may use: `requested` (> 0) capped at what the context has left after the
// prompt, or -1 (until the end of the turn or a full context).
int n_predict_within(int requested, size_t n_prompt, int n_ctx);

// Generates through the prompt cache: the prompt's beginning that the slot already holds is not
// fed again, and batch-invariant kernels make the answer bit-identical to a cold prefill's.
Completion complete(TokenSource& source, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                    const CompletionSettings& settings, const std::function<void(const TextParts&)>& on_delta);

}  // namespace r1pi
