// The r1pi-perplexity program: what it prints, --tokens with --all-logits, a saved file compared
// with itself, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.h"

namespace r1pi {
namespace {

const std::string& model() {
  static const std::string m = test::shared_data("models/stories260K/stories260K.gguf");
  return m;
}

test::CommandResult perplexity(const std::string& args) {
  return test::run_command(test::bin_dir() + "/r1pi-perplexity -m " + model() + " " + args);
}

std::string story() { return std::string(R1PI_TEST_DATA) + "/story.txt"; }

bool has(const std::string& output, const std::string& text) { return output.find(text) != std::string::npos; }

TEST(PerplexityCli, ScoresATextSavesItsRowsAndComparesThem) {
  const std::string dir = test::scratch_dir("perplexity-cli");
  const auto base = perplexity("-f " + story() + " -c 64 -t 1 --save-logits " + dir + "/rows.f32");
  ASSERT_EQ(base.exit_code, 0) << base.output;
  EXPECT_TRUE(has(base.output, "perplexity: 4.")) << base.output;  // 4.2514 when written
  EXPECT_TRUE(has(base.output, " tokens scored)\n")) << base.output;
  EXPECT_TRUE(has(base.output, "chunks of 64, the second half of each scored")) << base.output;
  EXPECT_EQ(std::filesystem::file_size(dir + "/rows.f32"), 434u * 512 * 4) << base.output;
  const auto again = perplexity("-f " + story() + " -c 64 -t 2 -b 9 --kl-divergence " + dir + "/rows.f32");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(has(again.output, "kl-divergence: mean 0, max 0 over 434 positions")) << again.output;
  EXPECT_TRUE(has(again.output, "top-1 agreement: 100.00%")) << again.output;
}

TEST(PerplexityCli, AllLogitsOverIdsKeepsEveryPosition) {
  const std::string dir = test::scratch_dir("perplexity-cli-ids");
  std::ofstream(dir + "/ids.txt") << "1 403 407 261 378\n 2 3 4 5 6 7 8 9 10\t11\n";
  const auto r = perplexity("--tokens " + dir + "/ids.txt --all-logits -c 32 --save-logits " + dir + "/all.f32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "(14 tokens scored)")) << r.output;
  EXPECT_TRUE(has(r.output, "saved 15 rows of 512 logits")) << r.output;
  EXPECT_EQ(std::filesystem::file_size(dir + "/all.f32"), 15u * 512 * 4);
}

TEST(PerplexityCli, ErrorsNameTheProblem) {
  const std::string dir = test::scratch_dir("perplexity-cli-errors");
  auto expect_error = [](const test::CommandResult& r, const std::string& says) {
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(has(r.output, says)) << "expected '" << says << "' in:\n" << r.output;
  };
  expect_error(perplexity(""), "give the text to score: -f FILE or --tokens IDS.txt");
  std::ofstream(dir + "/bad.txt") << "1 2 x3 4";
  expect_error(perplexity("--tokens " + dir + "/bad.txt"), "id number 3 is not a non-negative integer");
  std::ofstream(dir + "/short.txt") << "Once upon a time.";
  expect_error(perplexity("-f " + dir + "/short.txt"), "perplexity with -c 512 needs at least 1024");
  expect_error(perplexity("-f " + dir + "/absent.txt"), "absent.txt");
  expect_error(perplexity("-f " + story() + " -c 64 --kl-divergence " + dir + "/short.txt"), "bytes, but 434 rows");
  expect_error(test::run_command(test::bin_dir() + "/r1pi-perplexity -m " + dir + "/none.gguf -f " + story()),
               "none.gguf");
}

}  // namespace
}  // namespace r1pi
