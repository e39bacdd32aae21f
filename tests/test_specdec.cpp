// Speculative decoding's parts on rank 0 (src/specdec): the n-gram index that drafts, the cost
// curve, and the policy that decides how much of a draft is worth a verification.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/error.h"
#include "specdec/cost_curve.h"
#include "specdec/draft_policy.h"
#include "specdec/ngram_index.h"
#include "specdec/speculator.h"
#include "test_support.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

NgramIndex index_of(const Ids& history, int min_n, int max_n) {
  NgramIndex index(min_n, max_n);
  for (int32_t t : history) index.push(t);
  return index;
}

// ---- the n-gram index ----

TEST(NgramIndex, EmptyHistoryHasNoMatch) {
  NgramIndex index(1, 4);
  EXPECT_EQ(index.match().n, 0);
  EXPECT_TRUE(index.continuation(index.match(), 5).empty());
  index.push(3);  // one token: nothing before it to match
  EXPECT_EQ(index.match().n, 0);
}

TEST(NgramIndex, ContinuesTheMostRecentOccurrence) {
  // "1 2 3" occurred twice before the suffix; the later one (ending at 6) was followed by 7.
  const NgramIndex index = index_of({1, 2, 3, 9, 1, 2, 3, 7, 1, 2, 3}, 1, 3);
  const NgramMatch m = index.match();
  EXPECT_EQ(m.n, 3);
  EXPECT_EQ(m.end, 6);
  EXPECT_EQ(index.continuation(m, 3), (Ids{7, 1, 2}));
}

TEST(NgramIndex, PrefersTheLongestSuffix) {
  // The suffix "1 2 3" ended at 2 (then 4); "3" alone ended later, at 5 (then 5). Longest first.
  const NgramIndex index = index_of({1, 2, 3, 4, 9, 3, 5, 1, 2, 3}, 1, 3);
  EXPECT_EQ(index.match().n, 3);
  EXPECT_EQ(index.continuation(index.match(), 1), (Ids{4}));
  // Capped at two tokens, the longest match is "2 3", which also ended at 2.
  const NgramIndex short_index = index_of({1, 2, 3, 4, 9, 3, 5, 1, 2, 3}, 1, 2);
  EXPECT_EQ(short_index.match().n, 2);
  EXPECT_EQ(short_index.continuation(short_index.match(), 1), (Ids{4}));
  // Only single tokens: the most recent "3", followed by 5.
  const NgramIndex unigram = index_of({1, 2, 3, 4, 9, 3, 5, 1, 2, 3}, 1, 1);
  EXPECT_EQ(unigram.continuation(unigram.match(), 1), (Ids{5}));
}

TEST(NgramIndex, NoMatchShorterThanMin) {
  // Only "3" repeats; with min_n 2 that is no match.
  const NgramIndex index = index_of({1, 3, 5, 2, 3}, 2, 4);
  EXPECT_EQ(index.match().n, 0);
  EXPECT_EQ(index_of({1, 3, 5, 2, 3}, 1, 4).match().n, 1);
}

TEST(NgramIndex, SelfOverlappingRunsRepeatTheirPeriod) {
  // "7 7 7" ended at 2, right before the suffix ends at 3: the continuation runs into the draft.
  const NgramIndex sevens = index_of({7, 7, 7, 7}, 1, 3);
  EXPECT_EQ(sevens.match().n, 3);
  EXPECT_EQ(sevens.match().end, 2);
  EXPECT_EQ(sevens.continuation(sevens.match(), 5), (Ids{7, 7, 7, 7, 7}));
  // Period 2: "1 2 1" ended at 2; what follows is 2 1, then the draft's own 2 1 2.
  const NgramIndex pairs = index_of({1, 2, 1, 2, 1}, 1, 4);
  EXPECT_EQ(pairs.match().n, 3);
  EXPECT_EQ(pairs.continuation(pairs.match(), 5), (Ids{2, 1, 2, 1, 2}));
}

TEST(NgramIndex, KeepsUpAsTheHistoryGrows) {
  NgramIndex index(2, 3);
  const Ids text = {4, 5, 6, 4, 5, 8, 4, 5};
  for (size_t i = 0; i < text.size(); ++i) {
    index.push(text[i]);
    if (i == 4) {
      EXPECT_EQ(index.continuation(index.match(), 1), (Ids{6}));  // "4 5" then 6
    }
  }
  EXPECT_EQ(index.continuation(index.match(), 1), (Ids{8}));  // now the later "4 5", then 8
  EXPECT_EQ(index.history(), text);
}

TEST(NgramIndex, RefusesBadLengths) {
  EXPECT_THROW(NgramIndex(0, 3), Error);
  EXPECT_THROW(NgramIndex(3, 2), Error);
}

// ---- the cost curve ----

TEST(CostCurve, ParsesNormalisesAndInterpolates) {
  const CostCurve c = CostCurve::parse("# measured\n1 2.0\n2 2.2\n4 3.0  # a comment\n\n8 6\n", "test");
  EXPECT_EQ(c.max_batch(), 8);
  EXPECT_DOUBLE_EQ(c.at(1), 1.0);
  EXPECT_DOUBLE_EQ(c.at(2), 1.1);
  EXPECT_DOUBLE_EQ(c.at(3), 1.3);  // halfway between 1.1 and 1.5
  EXPECT_DOUBLE_EQ(c.at(8), 3.0);
  EXPECT_THROW(c.at(9), Error);
  EXPECT_EQ(CostCurve::parse(c.text(), "round trip").summary(), c.summary());
  EXPECT_EQ(c.summary(), "c(2) 1.10, c(4) 1.50, c(8) 3.00");
}

TEST(CostCurve, RefusesBadFiles) {
  EXPECT_NE(test::error_of([] { CostCurve::parse("2 1.5\n", "f"); }).find("B = 1"), std::string::npos);
  EXPECT_NE(test::error_of([] { CostCurve::parse("1 1\nfour 2\n", "f"); }).find("f:2:"), std::string::npos);
  EXPECT_NE(test::error_of([] { CostCurve::parse("1 1\n2 -1\n", "f"); }).find("positive"), std::string::npos);
  EXPECT_NE(test::error_of([] { CostCurve::parse("1 1\n2 1\n2 3\n", "f"); }).find("twice"), std::string::npos);
  EXPECT_NE(test::error_of([] { CostCurve::read("/nonexistent/cost.txt"); }).find("/nonexistent/cost.txt"),
            std::string::npos);
}

// ---- the policy ----

// The 8B shape at 2 threads (the measurements): B = 2 costs 1.08, B = 4 1.5, B = 8 3.2.
CostCurve big_model_cost() {
  return CostCurve::from_points({{1, 1}, {2, 1.08}, {4, 1.5}, {8, 3.2}, {16, 7.5}});
}

TEST(DraftPolicy, NothingBeforeAnObservationThenTheBestLength) {
  DraftPolicy policy(big_model_cost(), 15, 1, 4);
  EXPECT_EQ(policy.choose(2, 15), 0) << "the prior is no evidence";
  policy.record(2, 1, 1);
  const int k = policy.choose(2, 15);
  EXPECT_GT(k, 0);
  for (int other = 0; other <= 15; ++other)
    EXPECT_GE(policy.value(2, k), other == 0 ? 1.0 : policy.value(2, other)) << other;
}

TEST(DraftPolicy, RespectsTheLimit) {
  DraftPolicy policy(CostCurve::flat(16), 15, 1, 4);
  policy.record(1, 1, 1);
  EXPECT_EQ(policy.choose(1, 3), 3);    // flat cost: as long as allowed
  EXPECT_EQ(policy.choose(1, 0), 0);    // the context or the budget ends here
  EXPECT_EQ(policy.choose(1, 40), 15);  // --spec-max
  DraftPolicy short_curve(CostCurve::flat(5), 15, 1, 4);
  short_curve.record(1, 1, 1);
  EXPECT_EQ(short_curve.choose(1, 40), 4);  // the curve knows B up to 5 only
}

TEST(DraftPolicy, NeverDraftsWhenABatchCostsItsLength) {
  // c(B) = B (a tiny model): even certain acceptance gives (1 + k) / (1 + k) = 1, no gain.
  std::vector<std::pair<int, double>> linear;
  for (int B = 1; B <= 16; ++B) linear.emplace_back(B, B);
  DraftPolicy policy(CostCurve::from_points(linear), 15, 1, 4);
  for (int step = 0; step < 200; ++step) {
    EXPECT_EQ(policy.choose(3, 15), 0) << step;
    policy.record(3, 15, 15);
  }
}

TEST(DraftPolicy, RespectsTheCostCurveShape) {
  // Cheap up to B = 4, then dear: with every draft accepted, k = 3 is best.
  DraftPolicy policy(CostCurve::from_points({{1, 1}, {4, 1.0}, {5, 4.0}, {16, 16}}), 15, 1, 1);
  for (int i = 0; i < 50; ++i) policy.record(1, 15, 15);
  EXPECT_EQ(policy.choose(1, 15), 3);
}

// Positions past the longest draft so far count as good as the last one tried: a run of full
// acceptances lengthens the drafts to where the cost curve says stop (here a 1B shape on one
// thread of the test machine, c(2) = 1.42: k = 1 alone gives 1.41 tokens per unit, k = 3 1.75).
TEST(DraftPolicy, GrowsTheDraftWhileEverythingIsAccepted) {
  DraftPolicy policy(CostCurve::from_points({{1, 1}, {2, 1.42}, {3, 1.88}, {4, 2.28}, {5, 2.96},
                                             {8, 4.54}, {16, 9.74}}),
                     15, 1, 4);
  int k = 0;
  for (int step = 0; step < 40; ++step) {
    k = policy.choose(4, 15);
    policy.record(4, k > 0 ? k : policy.longest(), k > 0 ? k : policy.longest());  // else a shadow
  }
  EXPECT_GE(k, 3);
  EXPECT_GT(policy.value(4, k), 1.6);
}

// One rejection at position 3 long ago must not cap the drafts at 2 for good: while drafts of 2
// keep being accepted whole, position 3's estimate climbs back and the drafts grow (the 8B
// inflated file's sentence loop stayed at 2 tokens per draft for 400 tokens before this).
TEST(DraftPolicy, RetriesAPositionRejectedOnce) {
  DraftPolicy policy(CostCurve::from_points({{1, 1}, {2, 1.01}, {3, 1.13}, {4, 1.39}, {5, 1.91},
                                             {8, 2.37}, {9, 3.92}}),
                     8, 1, 4);
  for (int i = 0; i < 4; ++i) policy.record(4, 2, 2);
  policy.record(4, 3, 2);  // position 3 rejected
  int k = 0, steps = 0;
  for (; steps < 60; ++steps) {
    k = policy.choose(4, 8);
    if (k > 2) break;
    policy.record(4, k, k);
  }
  EXPECT_GT(k, 2) << "still drafting " << k << " after " << steps << " whole acceptances";
}

// One accepted draft is no certainty: after one lucky draft in sampled text (the 8B inflated file
// at 2 threads on the Zen 3 host: c(2) 1.47, c(8) 4.37) the next draft stays short, where taking
// it for a certainty drafted the 7 tokens that pay most if all are accepted. A run of accepted
// drafts still reaches those 7.
TEST(DraftPolicy, OneAcceptedDraftIsNoCertainty) {
  DraftPolicy policy(CostCurve::from_points({{1, 1}, {2, 1.47}, {3, 2.00}, {4, 2.65}, {5, 4.26},
                                             {6, 4.26}, {8, 4.37}, {9, 5.33}}),
                     8, 1, 4);
  policy.record(3, 1, 1);
  EXPECT_EQ(policy.choose(3, 8), 1);
  int k = 1, steps = 0;
  for (; steps < 10 && k < 7; ++steps) {
    policy.record(3, k, k);
    k = policy.choose(3, 8);
  }
  EXPECT_EQ(k, 7) << "after " << steps << " drafts accepted whole";
}

// Where the prior alone would pay (c(2) 1.47 < 1.5), a text whose first draft fails must not try
// each match length once more: a length never drafted takes the estimate of the nearest one that
// was (the quoting text of spec_bench, 34 steps, failed its first drafts at three lengths in turn).
TEST(DraftPolicy, AMatchLengthNeverDraftedBorrowsAnothersEstimate) {
  DraftPolicy policy(CostCurve::from_points({{1, 1}, {2, 1.47}, {3, 1.97}, {4, 2.70}}), 3, 1, 4);
  EXPECT_EQ(policy.choose(2, 3), 0) << "nothing before an observation";
  policy.record(2, 1, 0);
  for (int n = 1; n <= 4; ++n) EXPECT_EQ(policy.choose(n, 3), 0) << n;
  EXPECT_DOUBLE_EQ(policy.acceptance(4, 1), policy.acceptance(2, 1));
  // An accepted draft at length 4 makes it the nearest estimate for length 3.
  policy.record(4, 1, 1);
  EXPECT_DOUBLE_EQ(policy.acceptance(3, 1), policy.acceptance(2, 1)) << "the shorter one first";
  EXPECT_GT(policy.acceptance(4, 1), policy.acceptance(2, 1));
}

// On random tokens the drafts fail: the policy falls to plain decoding, the drafts it does not
// make (shadows) keep its estimates low; when the text turns repetitive, those shadows see it and
// the drafts come back within a few tokens.
TEST(DraftPolicy, FallsToZeroOnRandomTokensAndRecoversOnRepetition) {
  SpecOptions options;
  options.cost = big_model_cost();
  Speculator spec(options);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> token(0, 30);  // small alphabet: matches, wrong ones
  int drafting_steps = 0;
  const int steps = 2000;
  for (int step = 0; step < steps; ++step) {
    const std::vector<int32_t> draft = spec.draft(15);
    const int32_t next = token(rng);
    const int accepted = !draft.empty() && draft[0] == next ? 1 : 0;  // later ones: never checked
    if (!draft.empty()) spec.record(int(draft.size()), accepted);
    if (step >= steps / 2 && !draft.empty()) ++drafting_steps;
    spec.push(next);
  }
  // Only after a lucky match (one in 31), until the estimate falls back under break-even.
  EXPECT_LT(drafting_steps, steps / 2 / 5) << drafting_steps;

  // Now a loop of 12 tokens: the model picks what the loop says.
  const std::vector<int32_t> loop = {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51};
  int t = 0, drafted = 0, accepted_total = 0, steps_taken = 0;
  while (t < 600) {
    const std::vector<int32_t> draft = spec.draft(15);
    size_t a = 0;
    while (a < draft.size() && draft[a] == loop[size_t(t + 1 + int(a)) % loop.size()]) ++a;
    if (!draft.empty()) spec.record(int(draft.size()), int(a));
    for (size_t i = 0; i <= a; ++i) spec.push(loop[size_t(++t) % loop.size()]);
    if (t > 300) drafted += int(draft.size()), accepted_total += int(a), ++steps_taken;
  }
  EXPECT_GT(drafted, 0);
  EXPECT_GT(double(accepted_total) / drafted, 0.9);
  // Tokens per step: at least the 2.5 the issue asks of repetitive text.
  EXPECT_GT(double(300 - 1) / steps_taken, 2.5) << steps_taken;
}

// Where a batch is dear (the 8B shape at 2 threads on a Zen 3 core without VNNI: c(2) 1.63), the
// drafts must still start within a few tokens of the text turning repetitive, and then stay: the
// shadows observe the loop while nothing is drafted. (With probe drafts spaced for their cost
// instead, a 400-token loop got 1.3 tokens per step.)
TEST(DraftPolicy, DraftsSoonAfterTheTextLoopsWhereBatchesAreDear) {
  SpecOptions options;
  options.cost = CostCurve::from_points({{1, 1}, {2, 1.63}, {3, 2.22}, {4, 3.02}, {5, 4.68},
                                         {8, 4.85}, {9, 5.86}});
  Speculator spec(options);
  // Text that never repeats: nothing to draft from.
  for (int32_t t = 1000; t < 1100; ++t) {
    EXPECT_TRUE(spec.draft(8).empty());
    spec.push(t);
  }
  // A loop of 12 tokens from here: once it has gone round, drafts must come within a shadow's
  // length and stay.
  const std::vector<int32_t> loop = {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51};
  for (const int32_t x : loop) spec.push(x);
  int t = 0, first_draft = -1, steps_after = 0, tokens_after = 0;
  for (int step = 0; step < 300; ++step) {
    const std::vector<int32_t> draft = spec.draft(8);
    size_t a = 0;
    while (a < draft.size() && draft[a] == loop[size_t(t + 1 + int(a)) % loop.size()]) ++a;
    if (!draft.empty()) {
      spec.record(int(draft.size()), int(a));
      if (first_draft < 0) first_draft = step;
    }
    if (first_draft >= 0 && step > first_draft + 10) {
      EXPECT_FALSE(draft.empty()) << "step " << step << ", first draft at " << first_draft;
      ++steps_after;
      tokens_after += int(a) + 1;
    }
    for (size_t i = 0; i <= a; ++i) spec.push(loop[size_t(++t) % loop.size()]);
  }
  ASSERT_GE(first_draft, 0);
  EXPECT_LE(first_draft, 2 * spec.policy().longest()) << "steps of plain decoding in the loop";
  // With every draft accepted this curve pays most at 7 tokens (8 / c(8) = 1.65 per unit of cost).
  EXPECT_GT(double(tokens_after) / steps_after, 4.0) << tokens_after << " tokens in " << steps_after;
}

// The shadow is an observation: a text that confirms the draft not made raises the estimates, one
// that refutes it lowers them, and nothing is drafted for it.
TEST(Speculator, ShadowsTeachThePolicyWithoutDrafting) {
  SpecOptions options;
  options.cost = CostCurve::from_points({{1, 1}, {2, 1.9}, {3, 2.8}, {4, 3.7}});  // the prior does not pay
  Speculator spec(options);
  for (const int32_t x : {1, 2, 3, 4, 5, 1, 2, 3}) spec.push(x);
  EXPECT_TRUE(spec.draft(3).empty());  // a shadow of 3 tokens: 4, 5, 1
  const double before = spec.policy().acceptance(3, 1);
  spec.push(4);
  spec.push(5);
  EXPECT_DOUBLE_EQ(spec.policy().acceptance(3, 1), before) << "pending until the shadow ends";
  spec.push(1);
  EXPECT_GT(spec.policy().acceptance(3, 1), before);
  EXPECT_GT(spec.policy().acceptance(3, 3), before);
  const double after_hit = spec.policy().acceptance(4, 1);
  EXPECT_TRUE(spec.draft(3).empty());  // after 1 2 3 4 5 1 2 3 4 5 1: the shadow 2, 3, 4
  spec.push(9);                        // refuted at its first token
  EXPECT_LT(spec.policy().acceptance(4, 1), after_hit);
}

}  // namespace
}  // namespace r1pi
