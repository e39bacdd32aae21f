// Per-forward timings (runtime/step_timings.h, `r1pi --timings FILE.csv`) and --ignore-eos: what
// a row holds, where the Sync share comes from, and that the generation loop goes on past
// end-of-generation only when asked.
#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/step_timings.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

// Always answers the same token; counts the forwards.
class FixedSource final : public test::FakeTokenSource {
 public:
  explicit FixedSource(int32_t token) : FakeTokenSource(64), token_(token) {}

 private:
  int32_t pick(const Batch&, int, const Sampler&) override { return token_; }
  int32_t token_;
};

TEST(IgnoreEos, GenerationStopsAtEndOfGenerationUnlessAsked) {
  const LoadedModel m = load_model(test::tiny_model_file(3));
  const std::vector<int32_t> prompt{m.tokenizer->bos_id(), 5};
  FixedSource eos(m.tokenizer->eos_id());
  GenerationOptions o;
  o.n_predict = 10;
  o.sampler.temperature = 0;
  const GenerationResult stopped = generate(eos, *m.tokenizer, prompt, o, {});
  EXPECT_EQ(stopped.stop_reason, "eog");
  EXPECT_EQ(stopped.generated.size(), 1u);
  o.ignore_eos = true;
  const GenerationResult ignored = generate(eos, *m.tokenizer, prompt, o, {});
  EXPECT_EQ(ignored.stop_reason, "n_predict");
  EXPECT_EQ(ignored.generated, std::vector<int32_t>(10, m.tokenizer->eos_id()));
}

TEST(TimedTokenSource, ReportsEachForwardWithTheInnerSourcesCost) {
  FixedSource inner(7);
  std::vector<Step> steps;
  const StepCost cost{0.002, 0.001, 300, 400};
  TimedTokenSource timed(inner, [&](const Step& s) { steps.push_back(s); }, [&] { return cost; });
  const int32_t tokens[3] = {1, 2, 3};
  EXPECT_TRUE(timed.forward(Batch::run(tokens, 3, 0, LogitsFor::None), {}).empty());
  const Sampler greedy(SamplerParams{.temperature = 0});
  EXPECT_EQ(feed(timed, tokens, 1, 3, &greedy), 7);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].pos, 0);
  EXPECT_EQ(steps[0].tokens, 3);
  EXPECT_EQ(steps[1].pos, 3);
  EXPECT_EQ(steps[1].tokens, 1);
  EXPECT_EQ(steps[1].cost.sync_seconds, 0.001);
  EXPECT_EQ(steps[1].cost.received, 400u);
}

// A verification counts its accepted drafts: the drafts before the first that differs from the
// pick before it (the source picks 7 everywhere).
TEST(TimedTokenSource, AVerificationCountsItsAcceptedDrafts) {
  FixedSource inner(7);
  std::vector<Step> steps;
  TimedTokenSource timed(inner, [&](const Step& s) { steps.push_back(s); });
  const Sampler greedy(SamplerParams{.temperature = 0});
  const int32_t tokens[5] = {1, 7, 7, 3, 7};
  const std::vector<int32_t> before(10, 1);
  feed(timed, before.data(), 10, 0, nullptr);  // positions 0 .. 9 first: a slot has no gaps
  steps.clear();
  EXPECT_EQ(timed.forward(Batch::run(tokens, 5, 10, LogitsFor::All), std::vector<const Sampler*>(5, &greedy)),
            std::vector<int32_t>(5, 7));
  EXPECT_EQ(timed.forward(Batch::run(tokens, 1, 15, LogitsFor::All), {&greedy}), std::vector<int32_t>(1, 7));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].pos, 10);
  EXPECT_EQ(steps[0].tokens, 5);
  EXPECT_EQ(steps[0].accepted, 2);
  EXPECT_EQ(steps[1].accepted, 0);
}

TEST(TimedTokenSource, WithoutACostTheWallTimeIsAllPred) {
  FixedSource inner(7);
  Step step;
  TimedTokenSource timed(inner, [&](const Step& s) { step = s; });
  const int32_t token = 1;
  feed(timed, &token, 1, 0, nullptr);
  EXPECT_EQ(inner.forwards, 1);
  EXPECT_GE(step.cost.pred_seconds, 0.0);
  EXPECT_EQ(step.cost.sync_seconds, 0.0);
  EXPECT_EQ(step.cost.sent, 0u);
}

TEST(TimingsCsv, WritesAHeaderAndOneRowPerStep) {
  const std::string path = test::scratch_dir("timings_csv") + "/t.csv";
  {
    TimingsCsv csv(path);
    csv.write({4, 1, {0.0125, 0.0005, 2176, 4352}});
    csv.write({5, 3, {0.0250, 0, 0, 0}, 2});
    csv.close();  // the file appears here (a temporary until then)
  }
  EXPECT_EQ(test::read_file(path),
            "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted\n4,1,12.5000,0.5000,2176,4352,0\n"
            "5,3,25.0000,0.0000,0,0,2\n");
  EXPECT_NE(test::error_of([] { TimingsCsv("/nonexistent/dir/t.csv"); }).find("/nonexistent/dir/t.csv"),
            std::string::npos);
}

// The program: one row per forward, the prefill's batches then one per decode token, positions in
// order.
TEST(TimingsCli, R1piWritesOneRowPerForward) {
  const std::string path = test::scratch_dir("timings_cli") + "/run.csv";
  const test::CommandResult r = test::run_command(
      test::bin_dir() + "/r1pi -m " + test::tiny_model_file(3) + " -p 'Once upon a time' -n 6 --temp 0 -t 1 -b 2" +
      " --ignore-eos --timings " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream in(test::read_file(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted");
  std::vector<std::pair<int, int>> rows;
  while (std::getline(in, line)) {
    int pos = 0, tokens = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,", &pos, &tokens), 2) << line;
    rows.emplace_back(pos, tokens);
  }
  ASSERT_GE(rows.size(), 6u);
  int next = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].first, next) << "row " << i;
    next += rows[i].second;
  }
  // The last five rows are the decode tokens (the first of the six came from the prefill).
  for (size_t i = rows.size() - 5; i < rows.size(); ++i) EXPECT_EQ(rows[i].second, 1);
  EXPECT_LE(rows[rows.size() - 6].second, 2) << "prefill batches are -b 2";
}

}  // namespace
}  // namespace r1pi
