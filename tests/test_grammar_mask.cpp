// The token mask over the real Llama 3 vocabulary (128,256 tokens): on many states of several
// grammars it agrees with the brute-force check (each token's bytes fed to a copy of the state),
// allows() agrees with it, end-of-generation ids are allowed exactly when the grammar can end,
// control tokens never, and accept_token advances by a token's bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_test_support.h"
#include "grammar/json_schema_grammar.h"
#include "grammar/token_mask.h"
#include "test_support.h"

namespace r1pi {
namespace {

const Tokenizer& llama3() { return test::llama3_tokenizer(); }
const TokenTrie& trie() { return test::llama3_trie(); }

// The states met while feeding text byte by byte (every step: inside characters too).
std::vector<GrammarState> states_along(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  std::vector<GrammarState> states;
  GrammarState state(g);
  states.push_back(state);
  for (char c : text) {
    EXPECT_TRUE(state.accept(std::string_view(&c, 1))) << text;
    states.push_back(state);
  }
  return states;
}

void expect_mask_is_brute_force(const GrammarState& state, const std::string& where) {
  SCOPED_TRACE(where);
  const std::vector<uint64_t> mask = allowed_tokens(state, trie());
  ASSERT_EQ(mask.size(), (size_t(trie().n_vocab()) + 63) / 64);
  int allowed = 0;
  for (int32_t id = 0; id < trie().n_vocab(); ++id) {
    const std::string& bytes = trie().bytes(id);
    bool expected = false;
    if (trie().is_eog(id)) {
      expected = state.can_end();
    } else if (!bytes.empty()) {
      GrammarState copy = state;
      expected = copy.accept(bytes);
    }
    ASSERT_EQ(mask_has(mask, id), expected) << "token " << id << " '" << bytes << "'";
    if (id % 97 == 0) {
      ASSERT_EQ(allows(state, trie(), id), expected) << "token " << id;
    }
    allowed += expected;
  }
  for (int32_t id = trie().n_vocab(); id < int32_t(mask.size() * 64); ++id) ASSERT_FALSE(mask_has(mask, id));
  EXPECT_GT(allowed, 0);
}

void expect_masks_along(const std::shared_ptr<const Grammar>& g, const std::string& text, size_t stride) {
  const std::vector<GrammarState> states = states_along(g, text);
  for (size_t i = 0; i < states.size(); i += stride) expect_mask_is_brute_force(states[i], "after " + text.substr(0, i));
  expect_mask_is_brute_force(states.back(), "at the end of " + text);
}

TEST(GrammarMask, JsonSchemaStatesMatchBruteForce) {
  const auto g = json_schema_grammar(nlohmann::ordered_json::parse(R"({"type":"object","properties":{
      "name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":150},
      "tags":{"type":"array","items":{"enum":["red","green","blue"]}},"ok":{"type":"boolean"}},
      "required":["name","age"]})"));
  expect_masks_along(g, "{\"name\": \"Zo\xC3\xAB \xE4\xB8\xAD\", \"age\": 42, \"tags\": [\"red\", \"blue\"],\n  \"ok\": true}", 3);
}

TEST(GrammarMask, FreeJsonAndUnicodeStatesMatchBruteForce) {
  expect_masks_along(json_object_grammar(), "{\"k\\u00e9y\": [1.5e3, null, {\"\xF0\x9F\x98\x80\": \"\"}]}", 4);
  // Classes over CJK and emoji: byte-level tokens that end inside a character.
  const auto g = parse_gbnf("root ::= ([\\u4e00-\\u9fff] | [\\U0001F600-\\U0001F64F] | \" \")+ \".\"");
  expect_masks_along(g, "\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80.", 1);
}

TEST(GrammarMask, EndOfGenerationExactlyWhenComplete) {
  const auto g = parse_gbnf("root ::= \"yes\" | \"yes!\"");
  GrammarState state(g);
  const int32_t eos = llama3().eos_id();
  ASSERT_TRUE(trie().is_eog(eos));
  EXPECT_FALSE(mask_has(allowed_tokens(state, trie()), eos));
  EXPECT_FALSE(allows(state, trie(), eos));
  ASSERT_TRUE(accept_token(state, trie(), *llama3().find_token("yes")));
  EXPECT_TRUE(mask_has(allowed_tokens(state, trie()), eos));
  EXPECT_TRUE(mask_has(allowed_tokens(state, trie()), *llama3().find_token("!")));
  EXPECT_TRUE(allows(state, trie(), eos));
  EXPECT_TRUE(accept_token(state, trie(), eos));
  // A control token that is not end-of-generation (BOS) is never allowed.
  EXPECT_FALSE(mask_has(allowed_tokens(state, trie()), llama3().bos_id()));
  EXPECT_FALSE(allows(state, trie(), llama3().bos_id()));
  EXPECT_EQ(test::error_of([&] { (void)allows(state, trie(), trie().n_vocab()); }),
            "grammar: token id 128256 outside the vocabulary of 128256");
}

TEST(GrammarMask, AcceptTokenAdvancesOrLeavesTheState) {
  GrammarState state(parse_gbnf("root ::= \"hello world\""));
  const int32_t hello = *llama3().find_token("hello"), world = *llama3().find_token("\xC4\xA0world");  // "Ġworld"
  EXPECT_FALSE(accept_token(state, trie(), world));
  EXPECT_TRUE(accept_token(state, trie(), hello));
  EXPECT_FALSE(state.can_end());
  EXPECT_TRUE(accept_token(state, trie(), world));
  EXPECT_TRUE(state.can_end());
}

TEST(GrammarMask, TrieFromByteStrings) {
  // Duplicate spellings, a token that is a prefix of another, an empty (control) token.
  const TokenTrie small({"a", "ab", "", "a", "b", "abc"}, {2});
  GrammarState state(parse_gbnf("root ::= \"ab\""));
  const std::vector<uint64_t> mask = allowed_tokens(state, small);
  EXPECT_EQ(mask[0], 0b001011u);  // "a" twice, "ab"; not "b", not "abc", not EOG (2)
  ASSERT_TRUE(accept_token(state, small, 1));
  EXPECT_EQ(allowed_tokens(state, small)[0], 0b000100u);  // only the end
  EXPECT_EQ(test::error_of([] { TokenTrie({"a"}, {1}); }),
            "token trie: end-of-generation id 1 outside the vocabulary of 1");
}

}  // namespace
}  // namespace r1pi
