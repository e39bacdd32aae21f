// r1pi-model pull's choice of a repository's .gguf (src/tools/hub/hub_choice.h): which names carry
// which quantisation, the default, split files, and the errors, on the names real GGUF repositories
// use (TheBloke's dots, bartowski's and unsloth's dashes, Qwen's lower case and split files).
#include <gtest/gtest.h>

#include "common/error.h"
#include "tools/hub/hub_choice.h"

namespace r1pi {
namespace {

std::vector<HubFile> files(std::initializer_list<const char*> paths) {
  std::vector<HubFile> out;
  for (const char* p : paths) {
    HubFile f;
    f.path = p;
    f.size = 1;
    out.push_back(f);
  }
  return out;
}

std::vector<std::string> chosen(const std::vector<HubFile>& listing, const std::string& quant) {
  std::vector<std::string> paths;
  for (const HubFile& f : choose_gguf(listing, "o/r", quant).parts) paths.push_back(f.path);
  return paths;
}

std::string error_of(const std::vector<HubFile>& listing, const std::string& quant) {
  try {
    choose_gguf(listing, "o/r", quant);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HubChoice, QuantIsAWholeTokenRun) {
  EXPECT_TRUE(gguf_names_quant("Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Q4_K_M"));
  EXPECT_TRUE(gguf_names_quant("llama-2-7b.Q4_K_M.gguf", "q4_k_m"));  // case-insensitive
  EXPECT_TRUE(gguf_names_quant("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf", "Q4_K_M"));
  EXPECT_TRUE(gguf_names_quant("dir/model_Q8_0.gguf", "Q8_0"));  // after '_' in a token
  EXPECT_FALSE(gguf_names_quant("x-Q4_K_M.gguf", "Q4_K"));      // a prefix of a token is no match
  EXPECT_TRUE(gguf_names_quant("x-Q4_K.gguf", "Q4_K"));
  EXPECT_FALSE(gguf_names_quant("x-Q4_K.gguf", "Q4_K_M"));
  EXPECT_FALSE(gguf_names_quant("x-Q4_0_4_4.gguf", "Q4_0"));
  EXPECT_FALSE(gguf_names_quant("x-IQ4_XS.gguf", "Q4_XS"));  // the token must start there
  EXPECT_FALSE(gguf_names_quant("x-IQ2_XXS.gguf", "IQ2_XS"));
  EXPECT_TRUE(gguf_names_quant("x-UD-Q4_K_XL.gguf", "Q4_K_XL"));
  EXPECT_TRUE(gguf_names_quant("x-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"));  // a run of tokens
  EXPECT_FALSE(gguf_names_quant("x-Q4_K_XL.gguf", "UD-Q4_K_XL"));
  EXPECT_FALSE(gguf_names_quant("x-Q4_K_M.gguf", ""));
}

TEST(HubChoice, DefaultIsQ4KMThenQ4_0) {
  const auto listing = files({"README.md", "m-Q4_K_S.gguf", "m-Q4_K.gguf", "m-Q4_K_M.gguf", "m-Q8_0.gguf"});
  EXPECT_EQ(chosen(listing, ""), std::vector<std::string>{"m-Q4_K_M.gguf"});
  EXPECT_EQ(chosen(listing, "q4_k"), std::vector<std::string>{"m-Q4_K.gguf"});
  EXPECT_EQ(chosen(files({"m.Q4_0_4_4.gguf", "m.Q4_0.gguf", "m.Q8_0.gguf"}), ""),
            std::vector<std::string>{"m.Q4_0.gguf"});
  EXPECT_EQ(choose_gguf(listing, "o/r", "q8_0").quant, "Q8_0");
}

TEST(HubChoice, ProjectorsAreNoModels) {
  EXPECT_EQ(chosen(files({"mmproj-m-Q4_K_M.gguf", "m-Q4_K_M.gguf"}), ""), std::vector<std::string>{"m-Q4_K_M.gguf"});
  EXPECT_NE(error_of(files({"mmproj-m-F16.gguf"}), "").find("has no .gguf model file"), std::string::npos);
}

TEST(HubChoice, SplitFilesComeWholeAndInOrder) {
  const auto listing = files({"Q8_0/m-Q8_0-00002-of-00003.gguf", "Q8_0/m-Q8_0-00001-of-00003.gguf",
                              "Q8_0/m-Q8_0-00003-of-00003.gguf", "m-Q4_K_M.gguf"});
  EXPECT_EQ(chosen(listing, "Q8_0"),
            (std::vector<std::string>{"Q8_0/m-Q8_0-00001-of-00003.gguf", "Q8_0/m-Q8_0-00002-of-00003.gguf",
                                      "Q8_0/m-Q8_0-00003-of-00003.gguf"}));
  const auto gap = files({"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf"});
  EXPECT_NE(error_of(gap, "Q8_0").find("lacks part 2 of 3"), std::string::npos);
}

TEST(HubChoice, ErrorsListWhatThereIs) {
  const auto listing = files({"m-Q8_0.gguf", "m-IQ4_XS.gguf", "model_F16.gguf", "m-Q8_0-00001-of-00002.gguf",
                              "m-Q8_0-00002-of-00002.gguf"});
  const std::string missing = error_of(listing, "Q5_K_M");
  EXPECT_NE(missing.find("no .gguf file names Q5_K_M; available: Q8_0, IQ4_XS, F16"), std::string::npos) << missing;
  EXPECT_NE(missing.find("o/r:QUANT"), std::string::npos);
  EXPECT_NE(error_of(listing, "").find("Q4_K_M or Q4_0"), std::string::npos);
  EXPECT_NE(error_of(listing, "Q8_0").find("several .gguf files name Q8_0: m-Q8_0.gguf, m-Q8_0 (2 parts)"),
            std::string::npos);
  EXPECT_NE(error_of(files({"README.md", "config.json"}), "").find("o/r has no .gguf model file"), std::string::npos);
  EXPECT_NE(error_of(files({"weights.gguf"}), "Q8_0").find("available: weights.gguf"), std::string::npos);
}

TEST(HubChoice, ListingReadsLfsAndGitHashes) {
  const std::string sha(64, 'a'), blob(40, 'b');
  const auto parsed = parse_hub_listing(
      R"([{"type":"directory","oid":")" + blob + R"(","size":0,"path":"Q8_0"},)"
      R"({"type":"file","oid":")" + blob + R"(","size":12,"path":"README.md"},)"
      R"({"type":"file","oid":")" + blob + R"(","size":99,"path":"Q8_0/m.gguf","lfs":{"oid":")" + sha +
          R"(","size":99,"pointerSize":134}}])",
      "test");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].git_oid, blob);
  EXPECT_EQ(parsed[0].sha256, "");
  EXPECT_EQ(parsed[1].path, "Q8_0/m.gguf");
  EXPECT_EQ(parsed[1].size, 99u);
  EXPECT_EQ(parsed[1].sha256, sha);
  EXPECT_THROW(parse_hub_listing(R"({"error":"x"})", "test"), Error);
  EXPECT_THROW(parse_hub_listing(R"([{"type":"file","path":"a"}])", "test"), Error);
  EXPECT_THROW(parse_hub_listing("<html>", "test"), Error);
}

}  // namespace
}  // namespace r1pi
