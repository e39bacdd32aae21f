// The generation loop on the rank that owns the prompt: prefill in batches, then choose and feed
// tokens until end-of-generation, the token budget or a full context. With speculative decoding a
// decode step feeds the last token and a draft in one forward and keeps the draft's longest prefix
// that the model itself picks, plus the model's pick after it: the same tokens as one at a time.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/token_source.h"
#include "sampling/sampler.h"
#include "sampling/token_constraint.h"
#include "specdec/speculator.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct GenerationOptions {
  int n_predict = -1;    // tokens to generate; -1: until end-of-generation or a full context
  int batch_size = 64;   // prompt tokens per prefill forward
  SamplerParams sampler;
  bool ignore_eos = false;  // go on past end-of-generation tokens (benchmarks: a fixed length)
  int seq = 0;           // the sequence (KV cache slot) generated in
  // A prompt cache: the prompt's longest prefix that the slot already holds (a chat turn or a
  // request that extends the previous one) is not fed again; at least the last prompt token is
  // always fed, since its logits choose the first token. Off: the whole prompt is fed (benches).
  bool reuse_cache = false;
  // Asked before every decode forward: true ends the generation (stop_reason "cancelled"), so a
  // closed connection, a stop string or Ctrl-C costs at most the token already being computed.
  std::function<bool()> cancelled{};
  SpecOptions spec;      // speculative decoding (off unless spec.enabled)
  // With spec: asked before every decode step; false decodes that step plainly (the policy still
  // learns from the text). The server's slots: while other requests share the forward, where a
  // draft's verification costs more than it saves (docs/server.md). Empty: always allowed.
  std::function<bool()> may_draft{};
  // Called after every decode step with a draft: its length and how many of it were accepted.
  std::function<void(int drafted, int accepted)> on_spec_step;
  // Called for every token chosen (the end-of-generation one included), whatever its text: the
  // server's per-slot token counts (/slots, /metrics).
  std::function<void()> on_token{};
  // A rule the answer must follow (constrained decoding), at its start: every pick is masked to
  // what it allows next, and a draft is cut at its first token the rule refuses. Null: free. A
  // step where the rule allows nothing ends the generation with an r1pi::Error.
  std::shared_ptr<const TokenConstraint> constraint{};
  // With sampler.n_probs >= 0: each chosen token's log-probabilities, in order (a draft's
  // rejected rows are not reported).
  std::function<void(const PickLogprobs&)> on_logprobs{};
  // Control tokens reach the text callback as their text (the harmony format's markers, which its
  // split reads); off: they give no text.
  bool render_control = false;
};

struct GenerationResult {
  std::vector<int32_t> generated;   // sampled ids, the end-of-generation id included
  int cached_tokens = 0;            // prompt tokens the slot already held (reuse_cache)
  int prefill_tokens = 0;           // prompt tokens fed
  double prefill_seconds = 0;
  int decode_tokens = 0;            // tokens chosen after the prefill's (one forward each without
                                    // speculation)
  double decode_seconds = 0;
  std::string stop_reason;          // "eog", "n_predict", "context full" or "cancelled"
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
