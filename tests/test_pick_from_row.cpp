// A row's whole pick (Sampler::pick_from_row): logit_bias, a grammar's mask and the reported
// log-probabilities (issue 46), on hand-made rows. Every token source picks a row this way (a
// multi-rank source after gathering the row on rank 0), so these are the figures any rank count gives.
#include <gtest/gtest.h>

#include <cmath>
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

int32_t pick(const SamplerParams& p, const TokenMask* mask = nullptr, PickLogprobs* lp = nullptr) {
  return Sampler(p, mask, lp).pick_from_row(kRow.data(), int64_t(kRow.size()), 7, nullptr, 0);
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
  const TokenMask m = mask_of({1});
  EXPECT_TRUE(Sampler(p, &m).needs_whole_row());
  p.n_probs = 0;
  EXPECT_TRUE(Sampler(p).needs_whole_row());
  p.n_probs = -1;
  p.logit_bias = {{1, 1.0f}};
  EXPECT_TRUE(Sampler(p).needs_whole_row());
}

}  // namespace
}  // namespace r1pi
