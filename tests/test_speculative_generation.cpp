// The generation loop with speculative decoding gives exactly plain decoding's output, also where
// a step's accepted run meets end-of-generation, the -n budget or the end of the context. The
// model is a stand-in that follows a script, so that drafts are accepted, cut short and rejected
// where the test wants; the real models are in test_speculative_models.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/token_source.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

// Picks script[p + 1] after position p while everything fed so far is the script; off the script,
// a token derived from all it was fed. It keeps what it was fed as a KV cache does and refuses
// positions past its context, as ModelForward (test::FakeTokenSource).
class ScriptedModel final : public test::FakeTokenSource {
 public:
  ScriptedModel(Ids script, int n_ctx, int32_t n_vocab)
      : FakeTokenSource(n_ctx), script_(std::move(script)), n_vocab_(n_vocab) {}

 private:
  int32_t pick(const Batch& batch, int i, const Sampler&) override {
    const int p = batch.positions[size_t(i)];
    const Ids& fed = cached(0);
    const bool on_script = p + 1 < int(script_.size()) && std::equal(fed.begin(), fed.begin() + p + 1, script_.begin());
    if (on_script) return script_[size_t(p + 1)];
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k <= p; ++k) h = (h ^ uint64_t(fed[size_t(k)])) * 1099511628211ull;
    return int32_t(3 + h % uint64_t(n_vocab_ - 3));
  }

  Ids script_;
  int32_t n_vocab_;
};

constexpr int kPrompt = 20;

// A prompt, then a loop of `period` tokens that the script leaves every 13th position (so drafts
// also fail part-way), with end-of-generation at position eog_at (none when 0).
Ids script(int length, int period, int eog_at) {
  const int32_t eos = test::tiny_model().tokenizer->eos_id();
  Ids s;
  for (int p = 0; p < length; ++p) {
    int32_t t = int32_t(10 + (p < kPrompt ? p : p % period));
    if (p >= kPrompt && p % 13 == 0) t = int32_t(200 + p % 50);
    s.push_back(p == eog_at ? eos : t);
  }
  return s;
}

GenerationOptions greedy(int n_predict, bool speculate, int max_draft = 8) {
  GenerationOptions o;
  o.n_predict = n_predict;
  o.batch_size = 8;
  o.sampler.temperature = 0;
  o.spec.enabled = speculate;
  o.spec.cost = CostCurve::flat(16);  // every draft is worth it: the longest drafts, the most cases
  o.spec.max_draft = max_draft;
  return o;
}

// The script's first kPrompt ids as the prompt, on a fresh model.
GenerationResult run_with(const Ids& script_ids, int n_ctx, const GenerationOptions& o) {
  ScriptedModel model(script_ids, n_ctx, int32_t(test::tiny_model().config.n_vocab));
  const Ids prompt(script_ids.begin(), script_ids.begin() + kPrompt);
  return generate(model, *test::tiny_model().tokenizer, prompt, o, {});
}

GenerationResult run(const Ids& script_ids, int n_ctx, int n_predict, bool speculate, int max_draft = 8) {
  return run_with(script_ids, n_ctx, greedy(n_predict, speculate, max_draft));
}

// Same tokens, same stop, same count of decoded tokens; and speculation did something.
void expect_same(const GenerationResult& plain, const GenerationResult& spec, const std::string& what) {
  EXPECT_EQ(spec.generated, plain.generated) << what;
  EXPECT_EQ(spec.stop_reason, plain.stop_reason) << what;
  EXPECT_EQ(spec.decode_tokens, plain.decode_tokens) << what;
  EXPECT_EQ(spec.decode_tokens, int(spec.generated.size()) - 1) << what;
}

TEST(SpeculativeGeneration, DraftsAreAcceptedAndRejected) {
  const Ids s = script(400, 7, 0);
  const GenerationResult plain = run(s, 512, 300, false), spec = run(s, 512, 300, true);
  expect_same(plain, spec, "-n 300");
  EXPECT_EQ(spec.generated, Ids(s.begin() + kPrompt, s.begin() + kPrompt + 300));
  EXPECT_GT(spec.spec.accepted, 150);
  EXPECT_LT(spec.spec.accepted, spec.spec.drafted);  // the script's breaks reject drafts
  EXPECT_LT(spec.spec.steps, 150);
  EXPECT_EQ(plain.spec.drafted, 0);
}

// The server's slots draft only while alone (may_draft): the steps it refuses decode plainly, the
// tokens stay plain decoding's, and the policy, which went on learning from the text meanwhile,
// drafts again as soon as it is allowed.
TEST(SpeculativeGeneration, NoDraftWhereMayDraftSaysNo) {
  const Ids s = script(400, 7, 0);
  GenerationOptions o = greedy(300, true);
  int step = 0, drafts_refused = 0, drafts_late = 0;
  bool allowed = true;
  o.may_draft = [&] {
    ++step;
    allowed = step < 5 || step > 60;  // "others running" from the 5th step to the 60th
    return allowed;
  };
  o.on_spec_step = [&](int drafted, int) {
    if (!allowed && drafted > 0) ++drafts_refused;
    if (step > 60 && step <= 65 && drafted > 0) ++drafts_late;
  };
  const GenerationResult spec = run_with(s, 512, o);
  const GenerationResult plain = run(s, 512, 300, false);
  expect_same(plain, spec, "may_draft false from step 5 to 60");
  EXPECT_EQ(drafts_refused, 0);
  EXPECT_GT(drafts_late, 0);  // the policy learned from the shadows while refused
  EXPECT_GT(spec.spec.drafted, 0);
  EXPECT_GE(spec.spec.steps, 60);

  o.may_draft = [] { return false; };
  o.on_spec_step = {};
  const GenerationResult never = run_with(s, 512, o);
  expect_same(plain, never, "may_draft always false");
  EXPECT_EQ(never.spec.drafted, 0);
}

// on_token (the server's per-slot token counts) fires once per chosen token, several per accepted
// draft run.
TEST(SpeculativeGeneration, OnTokenCountsEveryChosenToken) {
  const Ids s = script(400, 7, 0);
  for (const bool spec : {false, true}) {
    GenerationOptions o = greedy(120, spec);
    int tokens = 0;
    o.on_token = [&] { ++tokens; };
    const GenerationResult r = run_with(s, 512, o);
    EXPECT_EQ(tokens, int(r.generated.size())) << (spec ? "speculative" : "plain");
    EXPECT_EQ(r.generated.size(), 120u);
    if (spec) {
      EXPECT_GT(r.spec.accepted, 0);
    }
  }
}

TEST(SpeculativeGeneration, EndOfGenerationInsideAnAcceptedRun) {
  // End-of-generation at every offset of a loop the drafts follow.
  for (int eog_at = kPrompt + 30; eog_at < kPrompt + 50; ++eog_at) {
    const Ids s = script(200, 6, eog_at);
    const GenerationResult plain = run(s, 512, -1, false), spec = run(s, 512, -1, true);
    expect_same(plain, spec, "eog at " + std::to_string(eog_at));
    EXPECT_EQ(spec.stop_reason, "eog");
    EXPECT_EQ(int(spec.generated.size()), eog_at - kPrompt + 1);
  }
}

// The prompt holds the loop, end-of-generation included: the drafts carry it, and it is accepted in
// the middle of a draft, whose later tokens (also accepted) must be dropped.
TEST(SpeculativeGeneration, EndOfGenerationAcceptedFromADraft) {
  const int32_t eos = test::tiny_model().tokenizer->eos_id();
  for (int eos_offset = 0; eos_offset < 8; ++eos_offset) {
    Ids s;
    for (int p = 0; p < 200; ++p) s.push_back(p % 8 == eos_offset ? eos : int32_t(30 + p % 8));
    // Drafts of 2: the policy drafts only after its first observation, the first shadow draft's
    // end, two tokens into the loop here.
    const GenerationResult plain = run(s, 512, -1, false), spec = run(s, 512, -1, true, 2);
    expect_same(plain, spec, "eos at loop offset " + std::to_string(eos_offset));
    EXPECT_EQ(spec.stop_reason, "eog");
    EXPECT_EQ(spec.generated.back(), eos);
    // (At offset 4 the prefill's own pick, at position 20, is the end; at offsets 5 and 6 a pick
    // of the two plain steps before the first observation.)
    if (spec.generated.size() > 3) {
      EXPECT_GT(spec.spec.accepted, 0) << eos_offset;
    }
  }
}

TEST(SpeculativeGeneration, BudgetEndsInsideAnAcceptedRun) {
  for (int n = 1; n <= 60; ++n) {
    const Ids s = script(200, 5, 0);
    const GenerationResult plain = run(s, 512, n, false), spec = run(s, 512, n, true);
    expect_same(plain, spec, "-n " + std::to_string(n));
    EXPECT_EQ(int(spec.generated.size()), n);
  }
}

TEST(SpeculativeGeneration, NeverDraftsPastTheContext) {
  // The model throws on a position past its context: every context end must be met exactly.
  for (int n_ctx = kPrompt + 1; n_ctx <= kPrompt + 60; ++n_ctx) {
    const Ids s = script(200, 5, 0);
    const GenerationResult plain = run(s, n_ctx, -1, false), spec = run(s, n_ctx, -1, true);
    expect_same(plain, spec, "context " + std::to_string(n_ctx));
    EXPECT_EQ(spec.stop_reason, "context full");
  }
}

TEST(SpeculativeGeneration, OffTheScriptEverythingIsRejected) {
  // A prompt the script does not follow: the stand-in picks derived tokens, drafts rarely match.
  Ids s = script(300, 9, 0);
  const GenerationResult plain = run(s, 512, 200, false), spec = run(s, 512, 200, true);
  expect_same(plain, spec, "script");
  std::reverse(s.begin(), s.begin() + kPrompt);
  const GenerationResult plain2 = run(s, 512, 200, false), spec2 = run(s, 512, 200, true);
  expect_same(plain2, spec2, "reversed prompt");
}

}  // namespace
}  // namespace r1pi
