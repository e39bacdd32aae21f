// Random walks under the token mask with the real Llama 3 vocabulary: from a seeded RNG, pick
// allowed tokens until the grammar can end, for several nested schemas. Each output must parse as
// JSON here; tests/grammar/check_walks.py runs this program again and validates every output
// against its schema with python3-jsonschema (the files land in $R1PI_GRAMMAR_WALK_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "grammar/grammar_test_support.h"
#include "grammar/json_schema_grammar.h"
#include "grammar/token_mask.h"
#include "test_support.h"

namespace r1pi {
namespace {

using json = nlohmann::ordered_json;

// A walk longer than this has lost its way: the test fails.
constexpr int kMaxTokens = 4000;
// After this many tokens the walk prefers tokens that close what is open.
constexpr int kSoftLength = 150;
constexpr int kWalksPerSchema = 6;

const TokenTrie& trie() { return test::llama3_trie(); }

// Made once: scratch_dir() empties the folder.
const std::string& walk_dir() {
  static const std::string dir = std::getenv("R1PI_GRAMMAR_WALK_DIR") ? std::getenv("R1PI_GRAMMAR_WALK_DIR")
                                                                      : test::scratch_dir("grammar-walks");
  return dir;
}

// Ends as soon as the grammar allows; otherwise half the time any allowed token, half the time a
// one-byte token (so that strings and arrays close after a while), and past kSoftLength a
// closing token when one is allowed.
std::string random_walk(const std::shared_ptr<const Grammar>& g, std::mt19937& rng) {
  static const std::vector<std::string> closers = {"\"", "]", "}", "0", "null", "\",", "\"}", "]}", "}]", "1"};
  GrammarState state(g);
  std::string text;
  for (int n = 0; n < kMaxTokens; ++n) {
    const std::vector<uint64_t> mask = allowed_tokens(state, trie());
    std::vector<int32_t> allowed, short_ones, closing;
    for (int32_t id = 0; id < trie().n_vocab(); ++id) {
      if (!mask_has(mask, id)) continue;
      if (trie().is_eog(id) && n > 0) return text;
      allowed.push_back(id);
      if (trie().bytes(id).size() == 1) short_ones.push_back(id);
      if (std::find(closers.begin(), closers.end(), trie().bytes(id)) != closers.end()) closing.push_back(id);
    }
    if (allowed.empty()) {
      ADD_FAILURE() << "no token allowed after: " << text;
      return text;
    }
    const std::vector<int32_t>& pool = n > kSoftLength && !closing.empty() && rng() % 10 != 0 ? closing
                                       : !short_ones.empty() && rng() % 2 == 0               ? short_ones
                                                                                             : allowed;
    const int32_t id = pool[rng() % pool.size()];
    EXPECT_TRUE(accept_token(state, trie(), id));
    text += trie().bytes(id);
  }
  ADD_FAILURE() << "the walk did not end within " << kMaxTokens << " tokens: " << text;
  return text;
}

void walk_schema(const std::string& name, const json& schema, uint32_t seed) {
  const auto g = json_schema_grammar(schema);
  const std::string dir = walk_dir();
  std::ofstream(dir + "/" + name + ".schema.json") << schema.dump(2);
  std::mt19937 rng(seed);
  for (int k = 0; k < kWalksPerSchema; ++k) {
    const std::string text = random_walk(g, rng);
    EXPECT_TRUE(json::accept(text)) << text;
    std::ofstream(dir + "/" + name + "." + std::to_string(k) + ".json", std::ios::binary) << text;
  }
}

TEST(GrammarRandomWalk, Person) {
  walk_schema("person", json::parse(R"({"type":"object","properties":{
      "name":{"type":"string","minLength":1,"maxLength":20},
      "age":{"type":"integer","minimum":0,"maximum":120},
      "email":{"type":"string","format":"email"},
      "tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":4},
      "address":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},
                 "required":["zip"],"additionalProperties":false},
      "nickname":{"type":["string","null"]}},
      "required":["name","age","address"],"additionalProperties":false})"), 1);
}

TEST(GrammarRandomWalk, RecursiveTree) {
  walk_schema("tree", json::parse(R"({"$defs":{"node":{"type":"object","properties":{
      "value":{"type":"integer","exclusiveMinimum":-10,"exclusiveMaximum":1000},
      "children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":3}},
      "required":["value","children"],"additionalProperties":false}},"$ref":"#/$defs/node"})"), 2);
}

TEST(GrammarRandomWalk, UnionsAndFormats) {
  walk_schema("unions", json::parse(R"({"type":"object","properties":{
      "events":{"type":"array","minItems":1,"items":{"oneOf":[
        {"type":"object","properties":{"kind":{"const":"click"},"x":{"type":"integer"},"y":{"type":"integer"}},
         "required":["kind","x","y"],"additionalProperties":false},
        {"type":"object","properties":{"kind":{"const":"key"},"code":{"type":"string","pattern":"^[A-Z][a-z]*$"}},
         "required":["kind","code"],"additionalProperties":false}]}},
      "when":{"type":"string","format":"date-time"},
      "day":{"type":"string","format":"date"},
      "id":{"type":"string","format":"uuid"},
      "score":{"anyOf":[{"type":"number"},{"type":"null"}]}},
      "required":["events","when","day","id","score"],"additionalProperties":false})"), 3);
}

TEST(GrammarRandomWalk, TuplesAndExtraProperties) {
  walk_schema("tuples", json::parse(R"({"type":"object","properties":{
      "point":{"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"},{"type":"string","maxLength":5}],
               "items":false},
      "matrix":{"type":"array","items":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},"maxItems":3},
      "label":{"type":"string","minLength":2,"maxLength":8}},
      "required":["point"],
      "additionalProperties":{"type":"integer","minimum":0,"maximum":9}})"), 4);
}

TEST(GrammarRandomWalk, AnyObject) {
  const auto g = json_object_grammar();
  const std::string dir = walk_dir();
  std::ofstream(dir + "/object.schema.json") << json{{"type", "object"}}.dump();
  std::mt19937 rng(5);
  for (int k = 0; k < kWalksPerSchema; ++k) {
    const std::string text = random_walk(g, rng);
    EXPECT_TRUE(json::accept(text)) << text;
    std::ofstream(dir + "/object." + std::to_string(k) + ".json", std::ios::binary) << text;
  }
}

}  // namespace
}  // namespace r1pi
