// r1pi-model tokenize on llama.cpp's Llama 2 vocabulary file (a vocabulary-only GGUF): the lines
// llama-tokenize prints, --ids, --no-bos, -f, and its errors.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace r1pi {
namespace {

std::string tokenize(const std::string& args) {
  const std::string vocab = test::shared_data("ggml-vocab-llama-spm.gguf");
  const auto result = test::run_command(test::bin_dir() + "/r1pi-model tokenize -m " + vocab + " " + args);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return result.output;
}

// BOS is added as the vocabulary asks (shown by its text, as llama-tokenize shows control tokens);
// the pieces are the text each token stands for, SentencePiece's space mark read as a space.
TEST(TokenizeCli, PrintsIdsAndPiecesAsLlamaTokenize) {
  EXPECT_EQ(tokenize("-p 'Hello world'"), "     1 -> '<s>'\n 15043 -> ' Hello'\n  3186 -> ' world'\n");
  EXPECT_EQ(tokenize("-p 'Hello world' --ids"), "1 15043 3186\n");
  EXPECT_EQ(tokenize("-p 'Hello world' --ids --no-bos"), "15043 3186\n");
  EXPECT_EQ(tokenize("-p '' --ids"), "1\n");
}

TEST(TokenizeCli, ReadsThePromptFromAFile) {
  const std::string path = test::scratch_dir("tokenize_file") + "/prompt.txt";
  std::ofstream(path) << "Hello world";
  EXPECT_EQ(tokenize("--ids -f " + path), "1 15043 3186\n");
}

TEST(TokenizeCli, Errors) {
  const std::string tool = test::bin_dir() + "/r1pi-model tokenize";
  const auto no_prompt = test::run_command(tool + " -m " + test::shared_data("ggml-vocab-llama-spm.gguf"));
  EXPECT_EQ(no_prompt.exit_code, 1);
  EXPECT_NE(no_prompt.output.find("give the text with -p TEXT or -f FILE"), std::string::npos)
      << no_prompt.output;
  const auto no_model = test::run_command(tool + " -m /nonexistent/m.gguf -p x");
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_NE(no_model.output.find("/nonexistent/m.gguf"), std::string::npos) << no_model.output;
  const auto no_file = test::run_command(tool + " -m /nonexistent/m.gguf -f /nonexistent/p.txt");
  EXPECT_EQ(no_file.exit_code, 1);
  EXPECT_NE(no_file.output.find("/nonexistent/p.txt"), std::string::npos) << no_file.output;
  EXPECT_NE(test::run_command(tool + " -p x").exit_code, 0);  // no -m
}

}  // namespace
}  // namespace r1pi
