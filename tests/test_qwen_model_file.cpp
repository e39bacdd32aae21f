// A Qwen model file made by r1pi-model from Qwen3's tokenizer.json: the tokenizer.ggml.* keys
// llama.cpp's converter writes for Qwen, the vocabulary grown or padded to the model's rows, and
// the file loading and running in r1pi and tokenizing in r1pi-model tokenize.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "test_support.h"
#include "tokenizer/vocab.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const std::string kQwen3Tokenizer = "qwen/tokenizers/qwen3/tokenizer.json";

// The tiny qwen3 preset, one layer, tied (the embedding is the big tensor at this vocabulary size).
MakeOptions qwen3_with_tokenizer() {
  MakeOptions o;
  o.progress = false;
  o.arch = "qwen3";
  o.n_layers = 1;
  o.tied_output = true;
  o.tokenizer_json = test::shared_data(kQwen3Tokenizer);
  return o;
}

TEST(QwenModelFile, HasTheConverterTokenizerKeys) {
  const MakeOptions o = qwen3_with_tokenizer();
  const GgufFile f = GgufFile::open(test::make_model_file("qwen3_tokenizer", o));
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "qwen2");
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 151669u);
  EXPECT_EQ(f.get_i32_array("tokenizer.ggml.token_type").size(), 151669u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges").size(), 151387u);
  EXPECT_EQ(f.get_u32("tokenizer.ggml.bos_token_id"), 151643u);
  EXPECT_EQ(f.get_u32("tokenizer.ggml.eos_token_id"), 151645u);
  EXPECT_EQ(f.get_u32("tokenizer.ggml.padding_token_id"), 151643u);
  EXPECT_EQ(f.try_bool("tokenizer.ggml.add_bos_token"), false);
  // EOS is the end of turn: no eot key (llama.cpp finds <|endoftext|> by name, as r1pi does).
  EXPECT_FALSE(f.has("tokenizer.ggml.eot_token_id"));
  // The tiny preset's 512 rows grew to the tokenizer's size.
  EXPECT_EQ(ModelConfig::from_gguf(f).n_vocab, 151669u);
}

// Qwen3-0.6B's and -8B's 151,936 rows: the ids beyond the tokenizer's are "[PAD<id>]" unused
// tokens, as in the converter's files.
TEST(QwenModelFile, PaddedAsTheConverterPads) {
  MakeOptions o = qwen3_with_tokenizer();
  o.n_vocab = 151936;
  const Vocab v = Vocab::from_gguf(GgufFile::open(test::make_model_file("qwen3_padded", o)));
  ASSERT_EQ(v.tokens.size(), 151936u);
  EXPECT_EQ(v.tokens[151668], "</think>");
  EXPECT_EQ(v.tokens[151669], "[PAD151669]");
  EXPECT_EQ(v.tokens[151935], "[PAD151935]");
  EXPECT_EQ(v.types[151935], TokenType::UNUSED);
}

// The file r1pi-model writes from Qwen3's tokenizer.json runs in r1pi (no BOS: the prompt's
// first token is <|im_start|>), and r1pi-model tokenize shows what the prompt became.
TEST(QwenModelFile, RunsAndTokenizesFromTheCli) {
  const std::string model = test::scratch_dir("qwen_cli") + "/qwen3.gguf";
  const std::string tool = test::bin_dir() + "/r1pi-model";
  const auto made = test::run_command(tool + " make --arch qwen3 --preset tiny --layers 1 --no-progress " +
                                      "--tokenizer " + test::shared_data(kQwen3Tokenizer) + " -o " + model);
  ASSERT_EQ(made.exit_code, 0) << made.output;

  const std::string prompt = "'<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n'";
  const auto run =
      test::run_command(test::bin_dir() + "/r1pi -m " + model + " -p " + prompt + " -n 4 --temp 0 -t 1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("prefill: 9 tokens"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("vocab 151669"), std::string::npos) << run.output;

  const auto ids = test::run_command(tool + " tokenize --ids -m " + model + " -p " + prompt);
  ASSERT_EQ(ids.exit_code, 0) << ids.output;
  EXPECT_EQ(ids.output, "151644 872 198 9707 151645 198 151644 77091 198\n");
}

}  // namespace
}  // namespace r1pi
