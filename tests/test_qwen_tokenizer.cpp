// Qwen's byte-level BPE (Qwen2.5's and Qwen3's tokenizer.json) against llama.cpp's qwen2 and
// deepseek-r1-qwen vectors, the vocabulary as llama.cpp's converter lays it out (special tokens,
// types, no BOS) and the chat markers as single tokens.
#include <gtest/gtest.h>

#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

// Loading a tokenizer.json of 151k tokens takes about a second: each is loaded once for the suite.
Vocab qwen_vocab(const std::string& version) {
  return load_hf_tokenizer_json(test::shared_data("qwen/tokenizers/" + version + "/tokenizer.json"),
                                SpecialTokenNames::Llama3);
}
const Tokenizer& qwen25() {
  static const Tokenizer t(qwen_vocab("qwen2.5"));
  return t;
}
const Tokenizer& qwen3() {
  static const Tokenizer t(qwen_vocab("qwen3"));
  return t;
}

// Both of llama.cpp's files (the deepseek-r1-qwen pair is the qwen2 one under its other name):
// the ids exactly, and decode gives the text back (Qwen cleans no spaces).
void expect_llama_cpp_vectors(const Tokenizer& t) {
  for (const char* name : {"ggml-vocab-qwen2.gguf", "ggml-vocab-deepseek-r1-qwen.gguf"}) {
    SCOPED_TRACE(name);
    const std::vector<test::VocabCase> cases =
        test::llama_cpp_vocab_cases(std::string("qwen/llamacpp-vocab-tests/") + name);
    ASSERT_EQ(cases.size(), 46u);
    for (const test::VocabCase& c : cases) {
      const Ids ids = t.encode(c.text, false, false);
      EXPECT_EQ(ids, c.ids) << "text: '" << c.text << "'";
      EXPECT_EQ(t.decode(ids), c.text);
    }
  }
}

TEST(QwenTokenizer, Qwen25MatchesLlamaCppVectors) { expect_llama_cpp_vectors(qwen25()); }
TEST(QwenTokenizer, Qwen3MatchesLlamaCppVectors) { expect_llama_cpp_vectors(qwen3()); }

TEST(QwenTokenizer, VocabularyLayout) {
  for (const Tokenizer* t : {&qwen25(), &qwen3()}) {
    const Vocab& v = t->vocab();
    EXPECT_EQ(v.model, "gpt2");
    EXPECT_EQ(v.pre, "qwen2");
    EXPECT_EQ(v.merges.size(), 151387u);
    // As the converter writes Qwen's files: BOS <|endoftext|> (never added), EOS <|im_end|>,
    // padding <|endoftext|>.
    EXPECT_EQ(t->bos_id(), 151643);
    EXPECT_EQ(t->eos_id(), 151645);
    EXPECT_EQ(v.pad_id, 151643);
    EXPECT_FALSE(t->add_bos());
    EXPECT_TRUE(t->is_end_of_generation(151645));  // <|im_end|>
    EXPECT_TRUE(t->is_end_of_generation(151643));  // <|endoftext|>
    EXPECT_FALSE(t->is_end_of_generation(151644)); // <|im_start|>
    EXPECT_EQ(v.types[151644], TokenType::CONTROL);
    // Not special in the file, but spelt like a control token: CONTROL, as the converter makes it.
    EXPECT_EQ(v.tokens[151659], "<|fim_prefix|>");
    EXPECT_EQ(v.types[151659], TokenType::CONTROL);
    EXPECT_EQ(v.tokens[151657], "<tool_call>");
    EXPECT_EQ(v.types[151657], TokenType::USER_DEFINED);
  }
  EXPECT_EQ(qwen25().n_vocab(), 151665);
  EXPECT_EQ(qwen3().n_vocab(), 151669);
  // Qwen3's think tags are ordinary added tokens: matched in prompts, shown in the output.
  EXPECT_EQ(qwen3().find_token("<think>"), 151667);
  EXPECT_EQ(qwen3().find_token("</think>"), 151668);
  EXPECT_EQ(qwen3().vocab().types[151667], TokenType::USER_DEFINED);
  EXPECT_FALSE(qwen25().find_token("<think>"));
}

// A ChatML prompt as Qwen3's template writes it with thinking off: no BOS, the markers one token
// each ("<|im_start|>user\n" is 151644 872 198 in Qwen's own examples).
TEST(QwenTokenizer, ChatPromptWithThinkTags) {
  const Tokenizer& t = qwen3();
  const std::string prompt =
      "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  EXPECT_EQ(encode_prompt(t, prompt, false),
            (Ids{151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271}));
  EXPECT_EQ(t.decode({151644, 77091, 198, 151667, 271, 151668, 9707, 151645}),
            "assistant\n<think>\n\n</think>Hello");
}

// Qwen splits numbers into single digits where Llama 3 takes three at a time.
TEST(QwenTokenizer, DigitsOneByOne) {
  EXPECT_EQ(qwen25().encode("12345", false, false), (Ids{16, 17, 18, 19, 20}));
  EXPECT_EQ(qwen25().encode("Hello world", false, false), (Ids{9707, 1879}));
}

}  // namespace
}  // namespace r1pi
