#include "benchmark/bench_run.h"

#include <algorithm>
#include <random>

#include "common/token_hash.h"
#include "ggml/ggml_type.h"
#include "model/tensor_table.h"
#include "model/architecture.h"
#include "runtime/generator.h"

namespace r1pi {

std::vector<int32_t> bench_prompt_ids(int count, uint32_t n_vocab) {
  std::mt19937 rng(20250101);
  std::vector<int32_t> ids(size_t(std::max(count, 0)));
  for (int32_t& id : ids) id = int32_t(rng() % n_vocab);
  return ids;
}

int measured_from(const BenchTest& t) { return t.config.depth > 0 || t.n_prompt > 0 ? t.config.depth : 1; }

int bench_prompt_length(const std::vector<BenchTest>& tests) {
  int n = 0;
  for (const BenchTest& t : tests) n = std::max(n, measured_from(t) + t.n_prompt);
  return n;
}

int bench_context(const std::vector<BenchTest>& tests) {
  int n = 0;
  // The generation loop counts the last generated token too (it is sampled, never fed).
  for (const BenchTest& t : tests) n = std::max(n, measured_from(t) + t.n_prompt + t.n_gen + 1);
  return n;
}

namespace {

BenchSample run_once(TokenSource& source, const std::function<StepCost()>& last_cost,
                     const Tokenizer& tokenizer, const BenchTest& t, const std::vector<int32_t>& ids,
                     const SpecOptions& spec) {
  const int start = measured_from(t);
  const std::vector<int32_t> prompt(ids.begin(), ids.begin() + start + t.n_prompt);
  BenchSample s;
  TimedTokenSource timed(
      source,
      [&](const Step& step) {
        if (step.pos < start) return;
        s.seconds += step.cost.pred_seconds + step.cost.sync_seconds;
        s.pred_seconds += step.cost.pred_seconds;
        s.sync_seconds += step.cost.sync_seconds;
      },
      last_cost);
  // Greedy: the ids, and so the hash, depend on nothing but the model, the prompt and the rank
  // count. The prefill yields the first generated token, so n_gen more take n_gen forwards.
  GenerationOptions gen;
  gen.n_predict = t.n_gen + 1;
  gen.batch_size = t.config.batch;
  gen.sampler = SamplerParams{0.0f, 1, 1.0f, 0};
  gen.ignore_eos = true;
  if (t.config.spec) gen.spec = spec;
  const GenerationResult r = generate(timed, tokenizer, prompt, gen, {});
  s.sha256 = token_ids_sha256(r.generated);
  s.drafted = r.spec.drafted;
  s.accepted = r.spec.accepted;
  return s;
}

}  // namespace

TestResult run_test(TokenSource& source, const std::function<StepCost()>& last_cost,
                    const Tokenizer& tokenizer, const BenchTest& test, const std::vector<int32_t>& ids,
                    int repetitions, const SpecOptions& spec) {
  TestResult r{test, {}, {}, {}, {}};
  std::vector<std::string> hashes;
  for (int i = 0; i <= repetitions; ++i) {
    BenchSample s = run_once(source, last_cost, tokenizer, test, ids, spec);
    hashes.push_back(s.sha256);
    if (i > 0) r.samples.push_back(s);
  }
  r.sha256 = hashes[0];
  r.error = moved_hash_problem(hashes);
  return r;
}

void check_spec_twins(std::vector<TestResult>& results) {
  auto same_but_spec = [](const BenchTest& a, const BenchTest& b) {
    return a.n_prompt == b.n_prompt && a.n_gen == b.n_gen && a.config.threads == b.config.threads &&
           a.config.batch == b.config.batch && a.config.depth == b.config.depth;
  };
  for (TestResult& on : results) {
    if (!on.test.config.spec || !on.error.empty()) continue;
    for (const TestResult& off : results)
      if (!off.test.config.spec && off.error.empty() && same_but_spec(on.test, off.test) &&
          off.sha256 != on.sha256)
        on.error = "speculative decoding changed the generated ids (sha256 " + on.sha256 + ", without it " +
                   off.sha256 + ")";
  }
}

BenchModel describe_bench_model(const LoadedModel& model, int n_ranks, const char* backend) {
  const ModelConfig& c = model.config;
  const uint64_t dim = c.dim, q_dim = uint64_t(c.n_heads) * c.head_dim;
  // The FFN: dense, or every expert and the router (a mixture of experts).
  const uint64_t ffn = c.n_experts ? (3 * uint64_t(c.expert_ffn_dim) + 1) * dim * c.n_experts : 3 * dim * c.ffn_dim;
  const uint64_t per_layer = dim * q_dim * 2 + dim * c.kv_dim() * 2 + ffn + 2 * dim;
  BenchModel m;
  m.params = uint64_t(c.n_vocab) * dim * (c.tied_output ? 1 : 2) + c.n_layers * per_layer + dim;
  char size[16];
  if (m.params >= 1e9)
    std::snprintf(size, sizeof size, "%.0fB", m.params / 1e9);
  else if (m.params >= 1e6)
    std::snprintf(size, sizeof size, "%.0fM", m.params / 1e6);
  else
    std::snprintf(size, sizeof size, "%.0fK", m.params / 1e3);
  const ModelWeights& w = model.weights;
  m.type = std::string(c.arch ? c.arch->name : "llama") + " " + size + " " +
           std::string(ggml_type_name(w.layers.empty() ? w.output.type : w.layers[0].wq.type));
  m.file_bytes = model.file_bytes;
  m.backend = backend;
  m.n_ranks = n_ranks;
  // A decode forward reads every matrix of the shard once (token_embd: one row, left out); of the
  // experts only the chosen ones, expected n_experts_used / n_experts of their bytes.
  m.weight_bytes_per_token = w.output.bytes();
  for (const LayerWeights& l : w.layers) {
    m.weight_bytes_per_token += l.wq.bytes() + l.wk.bytes() + l.wv.bytes() + l.wo.bytes() +
                                l.w1.bytes() + l.w2.bytes() + l.w3.bytes() + l.router.bytes();
    uint64_t experts = 0;
    for (const std::vector<Matrix>* v : {&l.gate_exps, &l.up_exps, &l.down_exps})
      for (const Matrix& e : *v) experts += e.bytes();
    if (c.n_experts) m.weight_bytes_per_token += experts * c.n_experts_used / c.n_experts;
  }
  return m;
}

}  // namespace r1pi
