// Picks the next token from logits: greedy at temperature 0, else top-k, then temperature, top-p
// (nucleus) and min-p over the kept candidates. The repetition penalties (penalties.h) change the
// logits before either; the token source applies them, as it holds each sequence's history. A sampled pick is a pure function of (logits, seed, position):
// its random number is the position-th output of a splitmix64 stream seeded with the seed, not the
// next number of a running stream. So a token chosen at position p is the same whether the
// positions before it were decoded one by one or verified together in a speculative batch.
// Candidate selection is separate so that ranks holding parts of the vocabulary can each send only
// their best candidates and the result stays exactly the single-rank one.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sampling/penalties.h"
#include "sampling/token_rule.h"

namespace r1pi {

struct SamplerParams {
  float temperature = 0.8f;  // 0: greedy
  int top_k = 40;            // <= 0: whole vocabulary
  float top_p = 0.95f;       // 1: off
  uint64_t seed = 0;
  float min_p = 0.0f;        // 0: off; else keep tokens at least min_p times the top token's probability
  PenaltyParams penalties{};  // applied to the logits first (off by default)
  // Added to those ids' logits after the penalties (OpenAI's logit_bias; -inf: never).
  std::vector<std::pair<int32_t, float>> logit_bias{};
  int n_probs = -1;           // >= 0: report the pick's log-probability and this many alternatives
};

// A pick's log-probability and the most likely alternatives (OpenAI's logprobs): the softmax at
// temperature 1 of the logits after penalties and logit_bias, before a grammar's mask and the
// sampling's cuts, as the model weighs the tokens.
struct TokenLogprob {
  int32_t id;
  float logprob;
};
struct PickLogprobs {
  TokenLogprob chosen{};
  std::vector<TokenLogprob> top;  // n_probs of them, most likely first (ties to the lower id)
};

struct Candidate {
  float logit;
  int32_t id;
};
// The order every selection uses: larger logit first, ties to the lower id.
inline bool candidate_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The token with the largest logit; ties go to the lowest id.
int32_t argmax(const float* logits, int64_t n);

// The k best of n logits (all when k <= 0 or k >= n) in candidate order; ids are offset by
// first_id (a rank's first vocabulary row).
std::vector<Candidate> top_candidates(const float* logits, int64_t n, int k, int32_t first_id = 0);

// The uniform number in [0, 1) that a sampled pick for `position` draws: splitmix64's output number
// `position` for `seed`, computed directly.
double uniform_at(uint64_t seed, int64_t position);

class Sampler {
 public:
  // rule: this row's grammar state (null: every token); logprobs: where the pick's
  // log-probabilities go when params.n_probs >= 0. Both must outlive the pick.
  explicit Sampler(const SamplerParams& params, const TokenRule* rule = nullptr, PickLogprobs* logprobs = nullptr)
      : params_(params), rule_(rule), logprobs_(logprobs) {}
  const SamplerParams& params() const { return params_; }
  bool greedy() const { return params_.temperature <= 0.0f; }
  // A bias, a mask or log-probabilities need the whole row in one place: a multi-rank source
  // gathers such rows on rank 0 and picks there with pick_from_row(), as one rank would.
  bool needs_whole_row() const { return rule_ || !params_.logit_bias.empty() || params_.n_probs >= 0; }
  // Greedy or sampled choice, from a full row of logits, of the token at `position` (the absolute
  // position the chosen token will occupy).
  int32_t sample(const float* logits, int64_t n, int64_t position) const;
  // Temperature, top-p and the draw over candidates already in candidate order (top-k applied).
  int32_t sample_from(const std::vector<Candidate>& candidates, int64_t position) const;
  // The whole pick from a whole row of raw logits (n: the vocabulary): penalties over the history
  // (the sequence up to and with the token whose successor is picked), bias, log-probabilities,
  // rule's mask, then sample(). Every token source's pick for a row, so each gives the same ids.
  // When the rule allows nothing the pick is unmasked: the caller, which holds the rule, says so.
  int32_t pick_from_row(const float* logits, int64_t n, int64_t position, const int32_t* history,
                        size_t n_history) const;
  // Under a rule, a pick draws from the row's best candidates: how many (1 when greedy, top_k
  // when sampled; 0 when top_k is off and every id is one, so the whole mask is needed) ...
  int rule_candidates(int64_t n) const;
  // ... and, given them in candidate order, the pick pick_from_row makes when the rule allows every
  // one of them (the mask would change nothing), or nullopt when it refuses one.
  std::optional<int32_t> pick_if_allowed(const std::vector<Candidate>& best, int64_t position) const;
  // Only the rule asks for the whole row (no bias, no log-probabilities): a multi-rank source can
  // gather the candidates first, and the whole row only where pick_if_allowed says no.
  bool rule_only() const { return rule_ && params_.logit_bias.empty() && params_.n_probs < 0; }

 private:
  int32_t pick_under_rule(const float* row, int64_t n, int64_t position) const;

  SamplerParams params_;
  const TokenRule* rule_;
  PickLogprobs* logprobs_;
};

}  // namespace r1pi
