// The Llama 3 byte-level BPE tokenizer against published vectors (llama.cpp's and 91 more checked
// with two independent implementations), plus DeepSeek-R1 special tokens and streaming decode; the
// Llama 2 SentencePiece vocabulary against llama.cpp's vectors.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {
namespace {

// Loading tokenizer.json takes about a second: each naming is loaded once for the whole suite.
const Tokenizer& tokenizer(SpecialTokenNames names) {
  static const Tokenizer llama3(
      load_hf_tokenizer_json(test::shared_data("llama3-tokenizer.json"), SpecialTokenNames::Llama3));
  if (names == SpecialTokenNames::Llama3) return llama3;
  static const Tokenizer deepseek(
      load_hf_tokenizer_json(test::shared_data("llama3-tokenizer.json"), SpecialTokenNames::DeepSeekR1));
  return deepseek;
}
const Tokenizer& llama3() { return tokenizer(SpecialTokenNames::Llama3); }
const Tokenizer& deepseek() { return tokenizer(SpecialTokenNames::DeepSeekR1); }

using Case = test::VocabCase;

std::vector<Case> extra_cases() {
  const auto doc =
      nlohmann::json::parse(test::read_file(test::shared_data("llama3_bpe_extra_vectors.json")));
  std::vector<Case> cases;
  for (const auto& c : doc.at("cases")) cases.push_back({c.at("text"), c.at("ids")});
  return cases;
}

void expect_vectors(const std::vector<Case>& cases, size_t expected_count) {
  ASSERT_EQ(cases.size(), expected_count);
  for (const Case& c : cases) {
    const std::vector<int32_t> ids = llama3().encode(c.text, false, false);
    EXPECT_EQ(ids, c.ids) << "text: '" << c.text << "'";
    EXPECT_EQ(llama3().decode(ids), c.text);
  }
}

TEST(Llama3Tokenizer, MatchesLlamaCppVectors) {
  expect_vectors(test::llama_cpp_vocab_cases("ggml-vocab-llama-bpe.gguf"), 46);
}

TEST(Llama3Tokenizer, MatchesExtraVectors) { expect_vectors(extra_cases(), 91); }

// llama.cpp's vectors for the Llama 2 SentencePiece vocabulary (a vocabulary-only GGUF): the
// space prefix, runs of spaces, byte fallback for characters the vocabulary lacks, digits one by
// one. Decoding gives the text back with the space prefix.
TEST(Llama2SpmTokenizer, MatchesLlamaCppVectors) {
  const Tokenizer t(Vocab::from_gguf(GgufFile::open(test::shared_data("ggml-vocab-llama-spm.gguf"))));
  EXPECT_EQ(t.n_vocab(), 32000);
  const std::vector<Case> cases = test::llama_cpp_vocab_cases("ggml-vocab-llama-spm.gguf");
  ASSERT_EQ(cases.size(), 46u);
  for (const Case& c : cases) {
    const std::vector<int32_t> ids = t.encode(c.text, false, false);
    EXPECT_EQ(ids, c.ids) << "text: '" << c.text << "'";
    EXPECT_EQ(t.decode(ids), c.text.empty() ? "" : " " + c.text);
  }
  EXPECT_EQ(t.encode("Hello world", true, false), (std::vector<int32_t>{1, 15043, 3186}));
}

TEST(Llama3Tokenizer, VocabularyLayout) {
  const Tokenizer& t = llama3();
  EXPECT_EQ(t.n_vocab(), 128256);
  EXPECT_EQ(t.bos_id(), 128000);
  EXPECT_EQ(t.eos_id(), 128001);
  EXPECT_TRUE(t.add_bos());
  EXPECT_TRUE(t.is_end_of_generation(128001));
  EXPECT_TRUE(t.is_end_of_generation(128009));  // <|eot_id|>
  EXPECT_FALSE(t.is_end_of_generation(128000));
  EXPECT_EQ(t.find_token("<|eot_id|>"), 128009);
  EXPECT_EQ(t.find_token("Hello"), 9906);
  EXPECT_FALSE(t.find_token("no such token"));
  EXPECT_EQ(t.vocab().types[128000], TokenType::CONTROL);
  EXPECT_EQ(t.vocab().merges.size(), 280147u);
}

TEST(Llama3Tokenizer, BosAndSpecialTokens) {
  const Tokenizer& t = llama3();
  EXPECT_EQ(t.encode("", true, false), std::vector<int32_t>{128000});
  EXPECT_EQ(t.encode("Hello world", true, false), (std::vector<int32_t>{128000, 9906, 1917}));
  EXPECT_EQ(t.encode("<|start_header_id|>user<|end_header_id|>", false, true),
            (std::vector<int32_t>{128006, 882, 128007}));
  // Control tokens render as nothing.
  EXPECT_EQ(t.decode({128000, 9906, 1917, 128009}), "Hello world");
}

TEST(DeepSeekR1Tokenizer, RenamedSpecialTokens) {
  const Tokenizer& t = deepseek();
  EXPECT_EQ(t.bos_id(), 128000);
  EXPECT_EQ(t.eos_id(), 128001);
  EXPECT_EQ(t.vocab().tokens[128000],
            "<\xEF\xBD\x9C"
            "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>");
  EXPECT_EQ(t.vocab().tokens[128001],
            "<\xEF\xBD\x9C"
            "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>");
  EXPECT_EQ(t.find_token("<｜User｜>"), 128011);
  EXPECT_EQ(t.find_token("<｜Assistant｜>"), 128012);
  EXPECT_EQ(t.find_token("<think>"), 128013);
  EXPECT_EQ(t.find_token("</think>"), 128014);
  EXPECT_EQ(t.find_token("<｜▁pad▁｜>"), 128015);
  EXPECT_TRUE(t.is_end_of_generation(128001));
  // The chat markers are text the user sees; BOS is not.
  EXPECT_EQ(t.decode({128000, 128013, 40, 128014}), "<think>I</think>");
}

TEST(DeepSeekR1Tokenizer, ParsesChatMarkersOnlyWhenAsked) {
  const Tokenizer& t = deepseek();
  const std::string prompt = "<｜User｜>Hi<｜Assistant｜>";
  const std::vector<int32_t> hi = t.encode("Hi", false, false);
  std::vector<int32_t> expected{128011};
  expected.insert(expected.end(), hi.begin(), hi.end());
  expected.push_back(128012);
  EXPECT_EQ(t.encode(prompt, false, true), expected);

  // Without special parsing the markers are ordinary text, as the extra vectors spell them.
  const std::vector<int32_t> plain = t.encode(prompt, false, false);
  EXPECT_EQ(plain, llama3().encode(prompt, false, false));
  EXPECT_EQ(plain.size(), 11u);
  for (int32_t id : plain) EXPECT_LT(id, 128000);
  EXPECT_EQ(t.decode(plain), prompt);

  const std::string bos = t.vocab().tokens[128000];
  EXPECT_EQ(t.encode(bos + "<｜User｜>1+1?<｜Assistant｜><think>\n", false, true).front(), 128000);
  EXPECT_EQ(t.encode("<｜User｜>x", true, true), (std::vector<int32_t>{128000, 128011, 87}));
}

TEST(Llama3Tokenizer, StreamDecoderHoldsBackSplitCharacters) {
  const Tokenizer& t = llama3();
  const std::string text = " this is 🦙.cpp";  // the llama is spread over three tokens
  const std::vector<int32_t> ids = t.encode(text, false, false);
  ASSERT_EQ(ids, (std::vector<int32_t>{420, 374, 11410, 99, 247, 13, 11055}));
  StreamDecoder stream(t);
  std::vector<std::string> shown;
  for (int32_t id : ids) shown.push_back(stream.push(id));
  EXPECT_EQ(shown, (std::vector<std::string>{" this", " is", " ", "", "🦙", ".", "cpp"}));
  EXPECT_EQ(stream.flush(), "");
}

TEST(Llama3Tokenizer, LongInputsRoundTrip) {
  const Tokenizer& t = llama3();
  std::string text;
  for (const Case& c : extra_cases()) text += c.text + "\n";
  std::string big;
  while (big.size() < (1u << 20)) big += text;
  big += std::string(20000, ' ') + std::string(20000, 'a') + std::string(5000, '\n') + "x";

  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = t.encode(big, false, false);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "encoded " << big.size() << " bytes into " << ids.size() << " tokens in " << seconds
            << " s\n";
  EXPECT_EQ(t.decode(ids), big);
}

TEST(Llama3Tokenizer, InvalidUtf8RoundTrips) {
  const Tokenizer& t = llama3();
  const std::string text = "ok \xFF\xFE bad \xC3( half \xE2\x82 end \xED\xA0\x80 surrogate \xF0\x9F\x98";
  EXPECT_EQ(t.decode(t.encode(text, false, true)), text);
}

TEST(Llama3Tokenizer, RejectsUnknownIds) {
  EXPECT_THROW(llama3().decode({128256}), Error);
  EXPECT_THROW(llama3().token_bytes(-1), Error);
}

// A tokenizer.json pre-tokenizer as Llama 3's and Qwen's: a Split on this regex, then ByteLevel.
nlohmann::json split_pre_tokenizer(const std::string& regex) {
  return {{"type", "Sequence"},
          {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}},
                             {{"type", "ByteLevel"}, {"use_regex", false}}}}};
}

TEST(HfTokenizerJson, ReportsBadFiles) {
  const std::string dir = test::scratch_dir("hf_tokenizer_json");
  EXPECT_THROW(load_hf_tokenizer_json(dir + "/missing.json", SpecialTokenNames::Llama3), Error);
  std::ofstream(dir + "/bad.json") << "{ not json";
  EXPECT_THROW(load_hf_tokenizer_json(dir + "/bad.json", SpecialTokenNames::Llama3), Error);
  // Array-form merges, and a gap in the ids.
  auto small = nlohmann::json::parse(
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
          "added_tokens": [{"id": 3, "content": "<|begin_of_text|>", "special": true},
                           {"id": 4, "content": "<|end_of_text|>", "special": true},
                           {"id": 5, "content": "<tag>", "special": false}]})");
  small["pre_tokenizer"] = split_pre_tokenizer(std::string(find_pre_tokenizer("llama-bpe")->pattern));
  std::ofstream(dir + "/small.json") << small;
  const Vocab v = load_hf_tokenizer_json(dir + "/small.json", SpecialTokenNames::Llama3);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_EQ(v.merges, std::vector<std::string>{"a b"});
  EXPECT_EQ(v.bos_id, 3);
  EXPECT_EQ(v.eos_id, 4);
  EXPECT_EQ(v.types[5], TokenType::USER_DEFINED);
  std::ofstream(dir + "/gap.json")
      << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}, "added_tokens": []})";
  EXPECT_THROW(load_hf_tokenizer_json(dir + "/gap.json", SpecialTokenNames::Llama3), Error);
  EXPECT_THROW(load_hf_tokenizer_json(dir + "/small.json", SpecialTokenNames::DeepSeekR1), Error);

  // The family is known by its regex: none, or one r1pi does not implement, is refused.
  small["pre_tokenizer"] = split_pre_tokenizer("\\p{N}+");
  std::ofstream(dir + "/unknown.json") << small;
  EXPECT_NE(test::error_of([&] { load_hf_tokenizer_json(dir + "/unknown.json", SpecialTokenNames::Llama3); })
                .find("unknown.json: pre-tokenizer regex \\p{N}+: not that of a pre-tokenizer r1pi knows"),
            std::string::npos);
  small.erase("pre_tokenizer");
  std::ofstream(dir + "/none.json") << small;
  EXPECT_NE(test::error_of([&] { load_hf_tokenizer_json(dir + "/none.json", SpecialTokenNames::Llama3); })
                .find("none.json: no Split regex in its pre_tokenizer"),
            std::string::npos);
}

}  // namespace
}  // namespace r1pi
