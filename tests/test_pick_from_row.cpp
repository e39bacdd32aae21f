// A row's whole pick (Sampler::pick_from_row): logit_bias, a grammar's rule (its mask asked for
// only where it can change the pick) and the reported log-probabilities (issue 46), on hand-made
// rows. Every token source picks a row this way (a multi-rank source after gathering the row on
// rank 0), so these are the figures any rank count gives.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "sampling/sampler.h"

namespace r1pi {
namespace {

const std::vector<float> kRow = {1.0f, 3.0f, 2.0f, -1.0f, 3.0f};

TokenMask mask_of(std::initializer_list<int32_t> ids, size_t n = 5) {
  TokenMask m((n + 63) / 64, 0);
  for (int32_t id : ids) m[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
  return m;
}

// A rule given by its mask, counting how often a pick asks for the whole mask.
class MaskRule : public TokenRule {
 public:
  explicit MaskRule(TokenMask mask) : mask_(std::move(mask)) {}
  bool allowed(TokenMask& mask) const override {
    ++masks_asked;
    mask = mask_;
    for (uint64_t w : mask_)
      if (w) return true;
    return false;
  }
  bool allows(int32_t id) const override { return mask_allows(mask_, id); }
  mutable int masks_asked = 0;

 private:
  TokenMask mask_;
};

int32_t pick(const SamplerParams& p, const TokenMask* mask = nullptr, PickLogprobs* lp = nullptr) {
  std::optional<MaskRule> rule;
  if (mask) rule.emplace(*mask);
  return Sampler(p, rule ? &*rule : nullptr, lp).pick_from_row(kRow.data(), int64_t(kRow.size()), 7, nullptr, 0);
}

TEST(PickFromRow, GreedyTiesGoToTheLowerIdAndTheBiasMovesThePick) {
  SamplerParams p;
  p.temperature = 0;
  EXPECT_EQ(pick(p), 1);
  p.logit_bias = {{4, 0.5f}};
  EXPECT_EQ(pick(p), 4);
  p.logit_bias = {{1, -INFINITY}, {4, -INFINITY}};  // llama.cpp's false: never
  EXPECT_EQ(pick(p), 2);
}

TEST(PickFromRow, TheMaskDecidesWhatMayComeGreedyOrSampled) {
  SamplerParams p;
  p.temperature = 0;
  const TokenMask only_low = mask_of({0, 3});
  EXPECT_EQ(pick(p, &only_low), 0);
  p.temperature = 1.0f;
  p.top_k = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    p.seed = seed;
    const int32_t id = pick(p, &only_low);
    EXPECT_TRUE(id == 0 || id == 3) << id;
  }
}

TEST(PickFromRow, LogprobsAreTheModelsBeforeTheMask) {
  SamplerParams p;
  p.temperature = 0;
  p.n_probs = 2;
  const TokenMask only_low = mask_of({0, 3});
  PickLogprobs lp;
  EXPECT_EQ(pick(p, &only_low, &lp), 0);
  double sum = 0;
  for (float l : kRow) sum += std::exp(double(l) - 3.0);
  EXPECT_EQ(lp.chosen.id, 0);
  EXPECT_NEAR(lp.chosen.logprob, 1.0 - 3.0 - std::log(sum), 1e-5);
  ASSERT_EQ(lp.top.size(), 2u);  // 1 and 4 tie: the lower id first
  EXPECT_EQ(lp.top[0].id, 1);
  EXPECT_EQ(lp.top[1].id, 4);
  EXPECT_EQ(lp.top[0].logprob, lp.top[1].logprob);
  EXPECT_NEAR(lp.top[0].logprob, -std::log(sum), 1e-5);
  // n_probs 0: the chosen token's alone; no n_probs: nothing written.
  p.n_probs = 0;
  PickLogprobs none;
  pick(p, nullptr, &none);
  EXPECT_TRUE(none.top.empty());
  EXPECT_EQ(none.chosen.id, 1);
  p.n_probs = -1;
  PickLogprobs untouched{{42, 1.0f}, {}};
  pick(p, nullptr, &untouched);
  EXPECT_EQ(untouched.chosen.id, 42);
}

TEST(PickFromRow, WholeRowIsNeededOnlyForBiasMaskOrLogprobs) {
  SamplerParams p;
  EXPECT_FALSE(Sampler(p).needs_whole_row());
  const MaskRule m(mask_of({1}));
  EXPECT_TRUE(Sampler(p, &m).needs_whole_row());
  p.n_probs = 0;
  EXPECT_TRUE(Sampler(p).needs_whole_row());
  p.n_probs = -1;
  p.logit_bias = {{1, 1.0f}};
  EXPECT_TRUE(Sampler(p).needs_whole_row());
}

// The rule's whole mask is asked for only where it can change the pick, and the pick is always the
// one the masked row gives: random rows (ties included) and masks, greedy and sampled, with top_k
// bounded (where the best candidates may all be allowed) and off (where the mask is always needed).
TEST(PickFromRow, TheMaskIsBuiltOnlyWhereItChangesThePick) {
  std::mt19937 rng(46);
  const int n = 300;
  int skipped = 0, built = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> row(n);
    for (float& l : row) l = float(int(rng() % 40)) / 4.0f;  // few values: many ties
    TokenMask bits((n + 63) / 64, 0);
    const unsigned keep_in = 1 + rng() % 8;  // from every id allowed to one in eight
    for (int id = 0; id < n; ++id)
      if (keep_in == 1 || rng() % keep_in == 0) bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
    SamplerParams p;
    p.temperature = trial % 3 == 0 ? 0.0f : 0.9f;
    p.top_k = trial % 5 == 0 ? 0 : int(1 + rng() % 50);
    p.top_p = trial % 2 ? 0.9f : 1.0f;
    p.seed = uint64_t(trial);
    std::vector<float> masked = row;
    for (int id = 0; id < n; ++id)
      if (!mask_allows(bits, id)) masked[size_t(id)] = -INFINITY;
    const int32_t expected = Sampler(p).pick_from_row(masked.data(), n, trial, nullptr, 0);
    const MaskRule rule(bits);
    EXPECT_EQ(Sampler(p, &rule).pick_from_row(row.data(), n, trial, nullptr, 0), expected) << "trial " << trial;
    (rule.masks_asked ? built : skipped) += 1;
    if (p.top_k == 0 && p.temperature > 0) {
      EXPECT_EQ(rule.masks_asked, 1);
    }
  }
  // Both paths ran often enough to mean something.
  EXPECT_GT(skipped, 300);
  EXPECT_GT(built, 300);
}

TEST(PickFromRow, AGreedyPickTheRuleAllowsNeverBuildsTheMask) {
  SamplerParams p;
  p.temperature = 0;
  const MaskRule rule(mask_of({1, 2}));
  EXPECT_EQ(Sampler(p, &rule).pick_from_row(kRow.data(), int64_t(kRow.size()), 7, nullptr, 0), 1);
  EXPECT_EQ(rule.masks_asked, 0);
  const MaskRule refuses_best(mask_of({2, 3}));
  EXPECT_EQ(Sampler(p, &refuses_best).pick_from_row(kRow.data(), int64_t(kRow.size()), 7, nullptr, 0), 2);
  EXPECT_EQ(refuses_best.masks_asked, 1);
}

// A rule that allows nothing: the pick is the unmasked one, for the generation loop to refuse.
TEST(PickFromRow, ARuleThatAllowsNothingLeavesThePickUnmasked) {
  SamplerParams p;
  p.temperature = 0;
  const MaskRule nothing(mask_of({}));
  EXPECT_EQ(Sampler(p, &nothing).pick_from_row(kRow.data(), int64_t(kRow.size()), 7, nullptr, 0), 1);
  EXPECT_EQ(nothing.masks_asked, 1);
}

}  // namespace
}  // namespace r1pi
