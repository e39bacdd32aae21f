#include "runtime/run_steps.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "common/error.h"
#include "common/token_hash.h"
#include "neon/kernels.h"
#include "common/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/model_fingerprint.h"
#include "runtime/cost_calibration.h"
#include "runtime/stop_signals.h"
#include "runtime/stop_strings.h"
#include "runtime/token_source.h"
#include "tokenizer/printable_text.h"

namespace r1pi {

int context_size(const RunOptions& o, const ModelConfig& c) {
  return o.ctx_size > 0 ? o.ctx_size : int(std::min<uint32_t>(c.n_ctx_train, 4096));
}

std::vector<int32_t> prepare_prompt(const RunOptions& o, const Tokenizer& tokenizer, int n_ctx) {
  if (o.prompt.empty()) throw Error("empty prompt: give the text with -p TEXT or -f FILE");
  std::vector<int32_t> prompt = encode_prompt(tokenizer, o.prompt, o.no_bos);
  check_fits_context(prompt.size(), o.n_predict, n_ctx);
  return prompt;
}

void print_banner(const LoadedModel& m, const RunOptions& o, int n_ctx, int threads, int n_ranks,
                  double load_seconds, uint64_t kv_bytes) {
  const ModelConfig& c = m.config;
  if (uint32_t(n_ctx) > c.n_ctx_train)
    std::fprintf(stderr, "warning: context %d is longer than the model was trained for (%u)\n",
                 n_ctx, c.n_ctx_train);
  // A chat or a server names its own sampling (the chat's line, each request's fields): one
  // temperature line, not this one beside it.
  char sampling[64] = "", slots[32] = "";
  if (o.parallel > 1) std::snprintf(slots, sizeof slots, " x %d slots", o.parallel);
  if (!o.session)
    std::snprintf(sampling, sizeof sampling, ", seed %llu, temp %.2f", (unsigned long long)o.sampler.seed,
                  o.sampler.temperature);
  // A mixture of experts: its experts' size and how many run per token, not the unused dense width.
  char ffn[64];
  if (c.n_experts)
    std::snprintf(ffn, sizeof ffn, "ffn %u experts of %u, %u per token", c.n_experts, c.expert_ffn_dim, c.n_experts_used);
  else
    std::snprintf(ffn, sizeof ffn, "ffn %u", c.ffn_dim);
  std::fprintf(stderr,
               "model: %s | dim %u, %u layers, %u/%u heads, %s, vocab %u | %.1f MB on rank 0, "
               "loaded in %.2f s\nrun: %d rank%s x %d threads, %s kernels, context %d%s%s, KV cache %s %.1f MB%s\n",
               printable_text(c.name).c_str(), c.dim, c.n_layers, c.n_heads, c.n_kv_heads, ffn, c.n_vocab,
               m.weights.total_bytes() / 1e6, load_seconds, n_ranks, n_ranks > 1 ? "s" : "", threads,
               kernels().name, n_ctx, slots, sampling, o.kv_type.c_str(), kv_bytes / 1e6, n_ranks > 1 ? " on rank 0" : "");
}

void print_text(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void print_summary(const GenerationResult& r) {
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "prefill: %d tokens, %.2f tok/s\n", r.prefill_tokens,
               r.prefill_tokens / std::max(r.prefill_seconds, 1e-9));
  std::fprintf(stderr, "decode: %d tokens, %.2f tok/s\n", r.decode_tokens,
               r.decode_tokens / std::max(r.decode_seconds, 1e-9));
  std::fprintf(stderr, "generated: %zu tokens (stop: %s)\n", r.generated.size(), r.stop_reason.c_str());
  if (r.speculative) {
    const SpecStats& s = r.spec;
    std::fprintf(stderr,
                 "spec: drafted %d, accepted %d (%.1f%%), %d steps, %.2f tokens/step, %.2fx by the "
                 "cost curve, cost %s (%s)\n",
                 s.drafted, s.accepted, s.drafted ? 100.0 * s.accepted / s.drafted : 0.0, s.steps,
                 s.steps ? double(r.decode_tokens) / s.steps : 0.0,
                 s.cost > 0 ? r.decode_tokens / s.cost : 1.0, r.spec_cost.c_str(), r.spec_cost_origin.c_str());
  }
  std::fprintf(stderr, "sha256: %s\n", token_ids_sha256(r.generated).c_str());
}

namespace {
// run(source), or with a timings_csv file run(a source that writes a row there per forward);
// flush: each row reaches the file at once (a session runs until it is stopped).
template <class Run>
auto with_timings(TokenSource& source, const std::function<StepCost()>& last_cost, const std::string& timings_csv,
                  bool flush, const Run& run) {
  if (timings_csv.empty()) return run(source);
  TimingsCsv csv(timings_csv);
  TimedTokenSource timed(source, [&](const Step& step) { csv.write(step, flush); }, last_cost);
  auto result = run(timed);
  csv.close();  // the rows still buffered: a write error there must not pass as success
  return result;
}
}  // namespace

GenerationResult run_generation(TokenSource& source, const std::function<StepCost()>& last_cost,
                                const GenerationOptions& gen, const std::vector<std::string>& stop,
                                const std::string& timings_csv, const Tokenizer& tokenizer,
                                const std::vector<int32_t>& prompt) {
  const StopSignals signals;
  StopStrings stops(stop);
  size_t kept = 0, through_stop = 0;  // tokens generated; those up to the one that completed a stop text
  GenerationOptions until_stopped = gen;
  until_stopped.cancelled = [&] { return stops.matched() || StopSignals::caught() != 0; };
  until_stopped.on_token = [&] {
    ++kept;
    if (gen.on_token) gen.on_token();
  };
  GenerationResult result = with_timings(source, last_cost, timings_csv, false, [&](TokenSource& s) {
    return generate(s, tokenizer, prompt, until_stopped, [&](const std::string& text) {
      const bool before = stops.matched();
      print_text(stops.push(text));
      if (!before && stops.matched()) through_stop = kept;
    });
  });
  print_text(stops.finish());
  if (stops.matched()) {
    // A speculative step may have accepted tokens past the one that completed the stop text:
    // they are not part of the output, so that the sha256 is the same with and without --spec.
    result.decode_tokens -= int(result.generated.size() - through_stop);
    result.generated.resize(through_stop);
    result.stop_reason = "stop string";
  } else if (result.stop_reason == "cancelled") {
    result.stop_reason = StopSignals::caught() == SIGINT ? "Ctrl-C" : "SIGTERM";
  }
  return result;
}

int run_session(const Session& session, TokenSource& source, const std::function<StepCost()>& last_cost,
                const std::string& timings_csv, const LoadedModel& model, int n_ctx, const GenerationOptions& gen) {
  return with_timings(source, last_cost, timings_csv, true,
                      [&](TokenSource& s) { return session(s, model, n_ctx, gen); });
}

GenerationOptions generation_options(const RunOptions& o, const LoadedModel& model, TokenSource& source,
                                     int n_ranks, int threads) {
  GenerationOptions gen;
  gen.n_predict = o.n_predict;
  gen.batch_size = o.batch_size;
  gen.sampler = o.sampler;
  gen.ignore_eos = o.ignore_eos;
  if (o.constraint) gen.constraint = o.constraint(*model.tokenizer);
  if (!o.spec) return gen;
  gen.spec.enabled = true;
  gen.spec.max_draft = o.spec_max;
  gen.spec.min_ngram = o.spec_min_ngram;
  gen.spec.max_ngram = o.spec_max_ngram;
  // The fingerprint keys the cached curve: the loader's when it has one, else read from the file.
  const Fingerprint fingerprint = model.fingerprint ? *model.fingerprint : model_fingerprint(GgufFile::open(o.model_path));
  const CostCurveChoice cost =
      choose_cost_curve(o.spec_cost,
                        cost_cache_key(to_hex(fingerprint), n_ranks, threads, kernels().name, o.sampler),
                        o.spec_max + 1, source, Sampler(o.sampler));
  gen.spec.cost = cost.curve;
  gen.spec.cost_origin = cost.origin;
  if (o.timings)
    gen.on_spec_step = [](int drafted, int accepted) {
      std::fprintf(stderr, "spec step: drafted %d, accepted %d\n", drafted, accepted);
    };
  return gen;
}

int run_single_rank(const RunOptions& o, const Session& session) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel model = load_model(o.model_path, true);
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int n_ctx = context_size(o, model.config);
  const std::vector<int32_t> prompt = o.session ? std::vector<int32_t>{} : prepare_prompt(o, *model.tokenizer, n_ctx);

  ThreadPool pool(o.threads);
  NoSync sync;
  ModelForward forward(model.config, model.weights, model.shard, n_ctx, pool, sync,
                       kv_cache_type(o.kv_type), o.parallel, kernels(), o.batch_size);
  LocalTokenSource source(forward);
  print_banner(model, o, n_ctx, pool.size(), 1, load_seconds, forward.kv_cache_bytes());
  const GenerationOptions gen = generation_options(o, model, source, 1, pool.size());
  if (o.session) return run_session(session, source, {}, o.timings_csv, model, n_ctx, gen);
  print_summary(run_generation(source, {}, gen, o.stop, o.timings_csv, *model.tokenizer, prompt));
  return exit_status_after_signals();
}

}  // namespace r1pi
