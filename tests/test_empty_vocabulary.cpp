// A vocabulary whose token strings are all empty used to load, generate and print nothing: it is
// refused at load, naming the file.
#include <gtest/gtest.h>

#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_loader.h"
#include "test_support.h"
#include "tokenizer/vocab.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

// A copy of a working model with every token string replaced by "".
std::string model_with_empty_tokens() {
  const std::string source = test::make_model_file("empty-vocabulary", {.preset = "tiny", .seed = 2});
  const std::string path = test::scratch_dir("empty-vocabulary-copy") + "/empty-tokens.gguf";
  const GgufFile in = GgufFile::open(source);
  GgufWriter w(uint32_t(in.alignment()));
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.alignment") continue;
    w.add(key, key == "tokenizer.ggml.tokens"
                   ? GgufValue::string_array(std::vector<std::string>(value.array.size()))
                   : value);
  }
  for (const GgufTensorInfo& t : in.tensors()) w.add_tensor(t.name, t.ne, t.type);
  w.open(path);
  for (const GgufTensorInfo& t : in.tensors()) w.write_data(in.tensor_data(t), t.n_bytes);
  w.close();
  return path;
}

TEST(Vocabulary, AllEmptyTokenStringsAreRefusedAtLoad) {
  const std::string path = model_with_empty_tokens();
  const std::string error = test::error_of([&] { load_model(path, false); });
  EXPECT_NE(error.find(path + ": every one of the vocabulary's"), std::string::npos) << error;
  EXPECT_NE(error.find("token strings is empty"), std::string::npos) << error;
  const test::CommandResult r = test::run_command(test::bin_dir() + "/r1pi -m " + path + " -p hi -n 4 -t 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("token strings is empty"), std::string::npos) << r.output;
}

TEST(Vocabulary, SomeEmptyTokenStringsStillLoad) {
  Vocab v;
  v.tokens = {"", "a", ""};
  v.types.assign(3, TokenType::NORMAL);
  EXPECT_EQ(test::error_of([&] { v.validate("v"); }), "(no error)");
  v.tokens = {"", "", ""};
  EXPECT_NE(test::error_of([&] { v.validate("v"); }).find("v: every one of the vocabulary's 3 token strings is empty"),
            std::string::npos);
}

}  // namespace
}  // namespace r1pi
