// Constrained decoding in the generation loop (issue 46): on a random-weight model every answer
// follows its grammar, and the ids are the same whatever the prompt batch, with or without
// speculative decoding (a draft is cut at its first token the grammar refuses), greedy and sampled.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "chat/grammar_constraint.h"
#include "common/thread_pool.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_grammar.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "runtime/token_source.h"
#include "test_support.h"

namespace r1pi {
namespace {

using Ids = std::vector<int32_t>;

struct Answer {
  Ids ids;
  std::string text;
  std::string stop_reason;
};

Answer generate_under(std::shared_ptr<const TokenConstraint> constraint, int batch, bool spec, float temperature,
                      int n_predict) {
  const LoadedModel& m = test::tiny_model();
  ThreadPool pool(1);
  NoSync sync;
  ModelForward forward(m.config, m.weights, m.shard, 512, pool, sync);
  LocalTokenSource source(forward);
  GenerationOptions o;
  o.n_predict = n_predict;
  o.batch_size = batch;
  o.sampler.temperature = temperature;
  o.sampler.seed = 11;
  o.spec.enabled = spec;
  o.spec.cost = CostCurve::flat(16);
  o.constraint = std::move(constraint);
  Answer a;
  const GenerationResult r = generate(source, *m.tokenizer, m.tokenizer->encode("Once upon a time", true, false), o,
                                      [&](const std::string& t) { a.text += t; });
  a.ids = r.generated;
  a.stop_reason = r.stop_reason;
  return a;
}

Answer generate_with(const std::shared_ptr<const Grammar>& grammar, int batch, bool spec, float temperature,
                     int n_predict = 120) {
  return generate_under(grammar ? std::make_shared<GrammarConstraint>(grammar, token_trie_of(*test::tiny_model().tokenizer))
                                : nullptr,
                        batch, spec, temperature, n_predict);
}

const nlohmann::ordered_json kSchema = nlohmann::ordered_json::parse(R"({
  "type": "object",
  "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"},
                 "tags": {"type": "array", "items": {"enum": ["a", "bb"]}, "maxItems": 3}},
  "required": ["name", "age", "tags"], "additionalProperties": false})");

TEST(ConstrainedGeneration, AnswersFollowTheSchemaAndEndWhereItEnds) {
  const auto grammar = json_schema_grammar(kSchema);
  for (float temperature : {0.0f, 1.0f}) {
    SCOPED_TRACE(temperature);
    const Answer a = generate_with(grammar, 8, false, temperature, 400);
    ASSERT_EQ(a.stop_reason, "eog") << a.text;
    const nlohmann::json j = nlohmann::json::parse(a.text);
    EXPECT_TRUE(j["name"].is_string() && j["age"].is_number_integer() && j["tags"].is_array()) << a.text;
    const std::string name = j["name"].get<std::string>();
    EXPECT_LE(std::count_if(name.begin(), name.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }),
              12) << name;  // characters, not bytes
  }
}

TEST(ConstrainedGeneration, SameIdsWhateverTheBatchAndSpeculation) {
  const auto grammar = parse_gbnf("root ::= (\"ab\" | \"abc\" | [a-e])+ \".\"\n");
  for (float temperature : {0.0f, 0.9f}) {
    SCOPED_TRACE(temperature);
    const Answer plain = generate_with(grammar, 8, false, temperature);
    EXPECT_EQ(generate_with(grammar, 1, false, temperature).ids, plain.ids);
    EXPECT_EQ(generate_with(grammar, 8, true, temperature).ids, plain.ids);
    for (char ch : plain.text) EXPECT_TRUE((ch >= 'a' && ch <= 'e') || ch == '.') << plain.text;
  }
}

TEST(ConstrainedGeneration, FreeAnswerIsUnchangedWithoutAGrammar) {
  // The constraint's plumbing costs a free answer nothing: no mask, the ids of before.
  const Answer a = generate_with(nullptr, 8, false, 0.0f, 40), b = generate_with(nullptr, 8, true, 0.0f, 40);
  EXPECT_EQ(a.ids, b.ids);
}

// A rule that allows nothing at some step (a vocabulary that cannot spell what the grammar needs
// next): the generation ends with an error naming where, not a pick from nothing.
class AllowsNothingAfterTwo final : public TokenConstraint {
 public:
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<AllowsNothingAfterTwo>(*this); }
  bool allowed(TokenMask& mask) const override {
    mask.assign(size_t(test::tiny_model().config.n_vocab + 63) / 64, taken_ < 2 ? ~uint64_t(0) : 0);
    return taken_ < 2;
  }
  bool allows(int32_t) const override { return taken_ < 2; }
  void accept(int32_t) override { ++taken_; }
  std::string describe() const override { return "two tokens"; }

 private:
  int taken_ = 0;
};

TEST(ConstrainedGeneration, ARuleThatAllowsNothingEndsWithAClearError) {
  try {
    generate_under(std::make_shared<AllowsNothingAfterTwo>(), 8, false, 0.0f, 10);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the grammar allows no token after two tokens");
  }
}

}  // namespace
}  // namespace r1pi
