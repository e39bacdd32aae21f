// The repetition penalties (sampling/penalties.h): llama.cpp's formula on hand-made rows, the
// window, and the property that makes them exact on any rank count: a row penalised in slices
// (each rank its own vocabulary rows) is the row penalised whole, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "sampling/penalties.h"

namespace r1pi {
namespace {

std::vector<float> penalised(std::vector<float> logits, const std::vector<int32_t>& history, PenaltyParams p) {
  apply_penalties(logits.data(), int64_t(logits.size()), 0, history.data(), history.size(), p);
  return logits;
}

// id 0 once, id 1 twice (a negative logit: multiplied), id 2 never, id 3 three times; every
// value exact in float.
TEST(Penalties, LlamaCppsFormula) {
  const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f};
  const std::vector<int32_t> history = {0, 1, 1, 3, 3, 3};
  EXPECT_EQ(penalised(logits, history, {2.0f, 64, 0.5f, 0.25f}), (std::vector<float>{0.25f, -3.25f, 0.5f, -0.25f}));
  EXPECT_EQ(penalised(logits, history, {2.0f, 64, 0.0f, 0.0f}), (std::vector<float>{1.0f, -2.0f, 0.5f, 1.5f}));
  // Negative frequency and presence penalties raise the logits (OpenAI's range allows them).
  EXPECT_EQ(penalised(logits, history, {1.0f, 64, -0.5f, -1.0f}), (std::vector<float>{3.5f, 1.0f, 0.5f, 5.5f}));
}

TEST(Penalties, TheWindowIsTheLastTokens) {
  const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f};
  const std::vector<int32_t> history = {0, 1, 1, 3, 3, 3};
  // The last two: id 3 twice.
  EXPECT_EQ(penalised(logits, history, {2.0f, 2, 0.5f, 0.25f}), (std::vector<float>{2.0f, -1.0f, 0.5f, 0.25f}));
  // -1: the whole history; 0: off.
  EXPECT_EQ(penalised(logits, history, {2.0f, -1, 0.5f, 0.25f}), penalised(logits, history, {2.0f, 6, 0.5f, 0.25f}));
  EXPECT_EQ(penalised(logits, history, {2.0f, 0, 0.5f, 0.25f}), logits);
  EXPECT_FALSE((PenaltyParams{2.0f, 0, 0.5f, 0.25f}.active()));
  EXPECT_FALSE((PenaltyParams{1.0f, 64, 0.0f, 0.0f}.active()));
  EXPECT_TRUE((PenaltyParams{1.0f, -1, 0.0f, 0.1f}.active()));
  // A history shorter than the window: all of it.
  EXPECT_EQ(penalised(logits, {3}, {2.0f, 64, 0.0f, 0.0f}), (std::vector<float>{2.0f, -1.0f, 0.5f, 1.5f}));
}

// Three uneven slices with their first ids, as three ranks hold a vocabulary of 1000 rows.
TEST(Penalties, SlicesGiveTheWholeRowsBytes) {
  std::mt19937 rng(7);
  std::normal_distribution<float> logit(0.0f, 4.0f);
  std::uniform_int_distribution<int32_t> token(0, 999);
  std::vector<float> row(1000);
  for (float& v : row) v = logit(rng);
  std::vector<int32_t> history(300);
  for (int32_t& t : history) t = token(rng) % 97 * 10;  // repeats, spread over every slice
  const PenaltyParams p{1.3f, 200, 0.35f, 0.15f};
  const std::vector<float> whole = penalised(row, history, p);
  EXPECT_NE(whole, row);
  std::vector<float> sliced = row;
  for (auto [begin, end] : {std::pair{0, 334}, {334, 667}, {667, 1000}})
    apply_penalties(sliced.data() + begin, end - begin, begin, history.data(), history.size(), p);
  EXPECT_EQ(std::memcmp(sliced.data(), whole.data(), whole.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace r1pi
