#include "runtime/generator.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <memory>
#include <optional>

#include "common/error.h"

namespace r1pi {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The rows of one forward that picks: a sampler each, with the row's rule (a constraint's state
// after the tokens before it) and a place for its log-probabilities.
struct PickRows {
  std::vector<std::unique_ptr<TokenConstraint>> rules;
  std::vector<PickLogprobs> logprobs;
  std::vector<Sampler> samplers;
  std::vector<const Sampler*> pointers;

  // rows: how many; rules holds one per row already, or none (no constraint).
  void build(const SamplerParams& params, size_t rows) {
    logprobs.assign(rows, {});
    samplers.clear();
    pointers.clear();
    for (size_t i = 0; i < rows; ++i)
      samplers.emplace_back(params, rules.empty() ? nullptr : rules[i].get(),
                            params.n_probs >= 0 ? &logprobs[i] : nullptr);
    for (const Sampler& s : samplers) pointers.push_back(&s);
  }
};
}  // namespace

void check_fits_context(size_t n_prompt, int n_predict, int n_ctx) {
  if (n_prompt == 0) throw Error("empty prompt: nothing to start from");
  if (n_prompt >= size_t(n_ctx))
    throw Error("the prompt is " + std::to_string(n_prompt) + " tokens and does not fit the context of " +
                std::to_string(n_ctx) + " tokens (raise -c/--ctx-size)");
  if (n_predict > 0 && n_prompt + size_t(n_predict) > size_t(n_ctx))
    throw Error("context overflow: " + std::to_string(n_prompt) + " prompt tokens + " +
                std::to_string(n_predict) + " to generate exceed the context of " +
                std::to_string(n_ctx) + " tokens (raise -c/--ctx-size or lower -n)");
}

GenerationResult generate(TokenSource& model, const Tokenizer& tokenizer,
                          const std::vector<int32_t>& prompt, const GenerationOptions& options,
                          const std::function<void(const std::string&)>& on_text) {
  check_fits_context(prompt.size(), options.n_predict, model.n_ctx());
  GenerationResult result;
  std::unique_ptr<TokenConstraint> constraint = options.constraint ? options.constraint->clone() : nullptr;
  PickRows rows;
  // The rows of a forward that picks `n` tokens (constrained: the rule's states along `draft`,
  // already cut to what the constraint takes, so n = draft.size() + 1).
  auto rows_for = [&](const std::vector<int32_t>& draft) -> const std::vector<const Sampler*>& {
    rows.rules.clear();
    if (constraint) {
      rows.rules.push_back(constraint->clone());
      for (int32_t t : draft) {
        rows.rules.push_back(rows.rules.back()->clone());
        rows.rules.back()->accept(t);
      }
    }
    rows.build(options.sampler, draft.size() + 1);
    return rows.pointers;
  };
  StreamDecoder decoder(tokenizer, options.render_control);
  std::optional<Speculator> speculator;
  if (options.spec.enabled) speculator.emplace(options.spec);
  result.speculative = options.spec.enabled;
  if (speculator) {
    result.spec_cost = options.spec.cost.summary();
    result.spec_cost_origin = options.spec.cost_origin;
  }

  // ---- prefill: the prompt in batches, logits of the last token only ----
  auto start = std::chrono::steady_clock::now();
  const int n_prompt = int(prompt.size());
  const int batch = std::max(1, options.batch_size);
  const int seq = options.seq;
  if (options.reuse_cache) {
    const std::vector<int32_t>& held = model.cached(seq);
    const size_t common = size_t(std::mismatch(held.begin(), held.end(), prompt.begin(), prompt.end()).first - held.begin());
    result.cached_tokens = int(std::min(common, prompt.size() - 1));
    // A slot whose window rings no longer reach back there is fed again from its start.
    if (!model.resumable(seq, result.cached_tokens)) result.cached_tokens = 0;
  }
  int32_t token = -1;
  for (int pos = result.cached_tokens; pos < n_prompt; pos += batch) {
    const int B = std::min(batch, n_prompt - pos);
    token = feed(model, prompt.data() + pos, B, pos, pos + B == n_prompt ? rows_for({})[0] : nullptr, seq);
  }
  if (speculator)
    for (int32_t t : prompt) speculator->push(t);
  result.prefill_tokens = n_prompt - result.cached_tokens;
  result.prefill_seconds = seconds_since(start);

  // Takes a chosen token; true when generation ends with it.
  auto keep = [&](int32_t t, size_t row) {
    // A pick the rule refuses comes only from a row where it allows nothing (Sampler::pick_from_row).
    if (constraint && !constraint->allows(t))
      throw Error("the grammar allows no token after " + constraint->describe());
    result.generated.push_back(t);
    if (options.on_token) options.on_token();
    if (options.on_logprobs && options.sampler.n_probs >= 0) options.on_logprobs(rows.logprobs[row]);
    if (constraint) constraint->accept(t);
    if (speculator) speculator->push(t);
    if (!options.ignore_eos && tokenizer.is_end_of_generation(t)) {
      result.stop_reason = "eog";
      return true;
    }
    if (on_text) on_text(decoder.push(t));
    if (options.n_predict > 0 && int(result.generated.size()) >= options.n_predict) {
      result.stop_reason = "n_predict";
      return true;
    }
    return false;
  };

  // ---- decode: `token` goes to position pos; feed it (and a draft), choose what follows ----
  start = std::chrono::steady_clock::now();
  int pos = n_prompt;
  bool done = keep(token, 0);
  while (!done) {
    if (pos >= model.n_ctx()) {
      result.stop_reason = "context full";
      break;
    }
    if (options.cancelled && options.cancelled()) {
      result.stop_reason = "cancelled";
      break;
    }
    // A draft never runs past the context, nor past the tokens still wanted: the forward holds
    // pos .. pos + k, and the step yields at most k + 1 tokens.
    const int wanted = options.n_predict > 0 ? options.n_predict - int(result.generated.size()) : INT_MAX;
    const int limit = std::min(model.n_ctx() - 1 - pos, wanted - 1);
    const bool may_draft = !options.may_draft || options.may_draft();
    std::vector<int32_t> draft = speculator ? speculator->draft(may_draft ? limit : 0) : std::vector<int32_t>{};
    // A draft goes only as far as the constraint takes it: a token it refuses would be refused
    // by the verification anyway (the model's pick there is masked).
    if (constraint && !draft.empty()) {
      std::unique_ptr<TokenConstraint> along = constraint->clone();
      size_t taken = 0;
      while (taken < draft.size() && along->allows(draft[taken])) along->accept(draft[taken++]);
      draft.resize(taken);
    }
    ++result.spec.steps;
    if (draft.empty()) {
      result.spec.cost += 1;
      token = feed(model, &token, 1, pos++, rows_for({})[0], seq);
      ++result.decode_tokens;
      done = keep(token, 0);
      continue;
    }
    std::vector<int32_t> fed{token};
    fed.insert(fed.end(), draft.begin(), draft.end());
    const std::vector<int32_t> picks =
        model.forward(Batch::run(fed.data(), int(fed.size()), pos, LogitsFor::All, seq), rows_for(draft));
    size_t accepted = 0;
    while (accepted < draft.size() && draft[accepted] == picks[accepted]) ++accepted;
    speculator->record(int(draft.size()), int(accepted));
    result.spec.cost += options.spec.cost.at(int(fed.size()));
    result.spec.drafted += int(draft.size());
    result.spec.accepted += int(accepted);
    if (options.on_spec_step) options.on_spec_step(int(draft.size()), int(accepted));
    // picks[0 .. accepted] are the tokens at pos + 1 .. pos + accepted + 1; the cache already
    // holds the accepted drafts (pos + 1 .. pos + accepted), and what it holds past them is
    // overwritten by later forwards before anything reads it.
    for (size_t i = 0; i <= accepted && !done; ++i) {
      ++pos;
      ++result.decode_tokens;
      token = picks[i];
      done = keep(token, i);
    }
  }
  if (on_text) on_text(decoder.flush());
  result.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace r1pi
