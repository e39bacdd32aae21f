// JSON Schema -> grammar: each supported keyword accepts valid JSON and rejects invalid JSON (fed
// byte by byte), each unsupported keyword is refused with its name and JSON pointer, $ref
// recursion works, and whitespace stays bounded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_test_support.h"
#include "grammar/json_schema_grammar.h"
#include "test_support.h"

namespace r1pi {
namespace {

using json = nlohmann::ordered_json;
using test::error_of;
using test::grammar_matches;

void expect_schema(const char* schema, const std::vector<std::string>& valid, const std::vector<std::string>& invalid) {
  SCOPED_TRACE(schema);
  const auto g = json_schema_grammar(json::parse(schema));
  for (const std::string& s : valid)
    EXPECT_TRUE(grammar_matches(g, s)) << "should match: " << s << "\n" << json_schema_to_gbnf(json::parse(schema));
  for (const std::string& s : invalid)
    EXPECT_FALSE(grammar_matches(g, s)) << "should not match: " << s << "\n" << json_schema_to_gbnf(json::parse(schema));
}

TEST(JsonSchemaGrammar, Primitives) {
  expect_schema(R"({"type": "string"})", {R"("")", R"("a b")", R"("\n\u00e9\"")", "\"\xC3\xA9\""}, {"a", R"("a)", "\"\n\"", "1"});
  expect_schema(R"({"type": "integer"})", {"0", "-12", "1234567890123456"}, {"01", "1.5", "+1", "-", "12345678901234567"});
  expect_schema(R"({"type": "number"})", {"0", "-1.25", "3e10", "2.5E-3"}, {".5", "1.", "1e", "NaN"});
  expect_schema(R"({"type": "boolean"})", {"true", "false"}, {"True", "1"});
  expect_schema(R"({"type": "null"})", {"null"}, {"nul", "0"});
  expect_schema(R"({"type": ["string", "null"]})", {R"("x")", "null"}, {"1"});
  expect_schema(R"({})", {"1", R"({"a": [true, null]})", R"("s")"}, {"", "[1,]"});
  expect_schema("true", {"[]"}, {"x"});
}

TEST(JsonSchemaGrammar, Objects) {
  const char* schema = R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                           "c": {"type": "boolean"}}, "required": ["b"]})";
  expect_schema(schema, {R"({"b": "x"})", R"({"a": 1, "b": "x"})", R"({"b":"x","c":true})", R"({"a":1,"b":"x","c":false})"},
                {"{}", R"({"a": 1})", R"({"b": "x", "a": 1})", R"({"b":"x",})", R"({"b": "x", "d": 1})", R"({,"b":"x"})"});
  // Nothing required: any subset in order, commas only between.
  expect_schema(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})",
                {"{}", R"({"a":1})", R"({"b":2})", R"({"a":1,"b":2})"}, {R"({"b":2,"a":1})", R"({,"b":2})", R"({"a":1,})"});
  // additionalProperties: false (and absent, with properties) allows no others; true and a schema
  // allow other names after the named ones, never a named one again.
  expect_schema(R"({"properties":{"a":{"type":"integer"}},"additionalProperties":false})", {R"({"a":1})"}, {R"({"a":1,"x":1})"});
  expect_schema(R"({"properties":{"a":{"type":"integer"}}})", {R"({"a":1})"}, {R"({"x":1})"});
  expect_schema(R"({"properties":{"ab":{"type":"integer"}},"additionalProperties":{"type":"string"}})",
                {R"({"ab":1,"x":"s"})", R"({"a":"s"})", R"({"abc":"s","b":"t"})", R"({"":"e"})", R"({"a\"":"q"})"},
                {R"({"x":1})", R"({"ab":1,"ab":"s"})", R"({"ab":"s"})", R"({"a\u0062":"s"})"});
  expect_schema(R"({"type":"object","additionalProperties":true})", {R"({"k":[1,{"z":null}]})", "{}"}, {"[]"});
  expect_schema(R"({"type":"object"})", {R"({"k":1,"j":"x"})"}, {"1"});
  // A property name that needs escaping, and one with a non-ASCII character.
  expect_schema(R"({"properties":{"a\"b":{"const":1},"\u00e9":{"const":2}},"required":["a\"b","\u00e9"]})",
                {"{\"a\\\"b\":1,\"\xC3\xA9\":2}"}, {R"({"ab":1,"e":2})"});
}

TEST(JsonSchemaGrammar, Arrays) {
  expect_schema(R"({"type":"array","items":{"type":"integer"}})", {"[]", "[1]", "[1, 2, 3]"}, {"[1,]", R"(["a"])", "[,1]"});
  expect_schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})", {"[1,2]", "[1,2,3]"},
                {"[]", "[1]", "[1,2,3,4]"});
  expect_schema(R"({"type":"array","maxItems":1})", {"[]", R"(["x"])"}, {"[1,2]"});
  expect_schema(R"({"type":"array","minItems":1})", {"[null]"}, {"[]"});
  expect_schema(R"({"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]})", {R"([1,"a"])"},
                {"[1]", R"([1,"a",2])", R"(["a",1])"});
  expect_schema(R"({"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"boolean"},"maxItems":3})",
                {"[1]", "[1,true]", "[1,true,false]"}, {"[1,true,false,true]", "[1,2]"});
  expect_schema(R"({"type":"array","items":false})", {"[]"}, {"[1]"});
}

TEST(JsonSchemaGrammar, Strings) {
  expect_schema(R"({"type":"string","minLength":2,"maxLength":3})", {R"("ab")", R"("abc")", R"("\n\t")"}, {R"("a")", R"("abcd")"});
  expect_schema(R"({"type":"string","pattern":"^[a-z]+-\\d{2,3}$"})", {R"("ab-12")", R"("x-123")"},
                {R"("ab-1")", R"("Ab-12")", R"("ab-1234")", R"(" ab-12")"});
  expect_schema(R"({"type":"string","pattern":"(cat|dog)s?"})", {R"("cat")", R"("my dogs!")", R"("xcatx")"}, {R"("cow")"});
  expect_schema(R"({"type":"string","pattern":"^a.b$"})", {R"("axb")", R"("a\"b")", R"("a\tb")"}, {R"("a\nb")", R"("ab")"});
  expect_schema(R"({"type":"string","pattern":"^(?:[A-F0-9]{2}:?)*$"})", {R"("")", R"("AB:CD")", R"("ABCD")"}, {R"("A")"});
  expect_schema(R"({"type":"string","pattern":"^[^\\s\"]+$"})", {R"("ok")"}, {R"("a b")", R"("a\"")"});
  expect_schema(R"({"type":"string","pattern":"^\\.\\*\\x41\\u00e9$"})", {"\".*A\xC3\xA9\""}, {R"("x*A")"});
  expect_schema(R"({"type":"string","format":"date"})", {R"("2024-02-28")", R"("1999-12-31")", R"("2030-04-30")"},
                {R"("2024-02-30")", R"("2024-13-01")", R"("2024-04-31")", R"("24-01-01")"});
  expect_schema(R"({"type":"string","format":"time"})", {R"("23:59:59Z")", R"("08:00:00.123+02:00")"}, {R"("24:00:00Z")", R"("08:00")"});
  expect_schema(R"({"type":"string","format":"date-time"})", {R"("2024-01-02T03:04:05Z")"}, {R"("2024-01-02 03:04:05Z")"});
  expect_schema(R"({"type":"string","format":"uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567")"});
  expect_schema(R"({"type":"string","format":"email"})", {R"("a.b+c@example.co.uk")"}, {R"("ab.example.com")", R"("a@b")"});
}

TEST(JsonSchemaGrammar, IntegerBounds) {
  expect_schema(R"({"type":"integer","minimum":-15,"maximum":123})", {"-15", "-9", "0", "7", "99", "100", "123"},
                {"-16", "-20", "124", "200", "1000", "-0"});
  expect_schema(R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})", {"1", "9"}, {"0", "10"});
  expect_schema(R"({"type":"integer","minimum":50})", {"50", "99", "100", "123456"}, {"49", "5", "-1"});
  expect_schema(R"({"type":"integer","maximum":-5})", {"-5", "-10", "-12345"}, {"-4", "0", "5"});
  expect_schema(R"({"type":"integer","minimum":2.5,"maximum":4})", {"3", "4"}, {"2", "5"});
  expect_schema(R"({"minimum":0,"maximum":0})", {"0"}, {"1", "-1"});  // no type: the bounds make it an integer
  // Every integer of a range with many digit-length changes.
  const auto g = json_schema_grammar(json::parse(R"({"type":"integer","minimum":-1234,"maximum":10203})"));
  for (int v = -1300; v <= 10300; ++v)
    ASSERT_EQ(grammar_matches(g, std::to_string(v)), v >= -1234 && v <= 10203) << v;
}

TEST(JsonSchemaGrammar, EnumConstAndCombinations) {
  expect_schema(R"({"enum":["red","green",1,null,{"a":[1]}]})", {R"("red")", "1", "null", R"({"a":[1]})"}, {R"("blue")", "2"});
  expect_schema(R"({"type":"string","enum":["a",1]})", {R"("a")"}, {"1"});
  expect_schema(R"({"const":"only"})", {R"("only")"}, {R"("other")"});
  expect_schema(R"({"anyOf":[{"type":"integer"},{"type":"array","items":{"type":"string"}}]})", {"1", R"(["x"])"}, {R"("x")"});
  expect_schema(R"({"oneOf":[{"type":"boolean"},{"type":"null"}]})", {"true", "null"}, {"0"});
  // anyOf beside other keywords: they apply to each branch.
  expect_schema(R"({"type":"object","properties":{"k":{"type":"string"}},"required":["k"],
                    "anyOf":[{"properties":{"n":{"type":"integer"}}},{"properties":{"b":{"type":"boolean"}}}]})",
                {R"({"k":"x"})", R"({"k":"x","n":1})", R"({"k":"x","b":true})"}, {R"({"k":"x","n":true})"});
  expect_schema(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                             {"properties":{"b":{"type":"string"}},"required":["b"]}]})",
                {R"({"a":1,"b":"x"})"}, {R"({"a":1})", R"({"b":"x"})"});
  expect_schema(R"({"$defs":{"base":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}},
                    "allOf":[{"$ref":"#/$defs/base"},{"properties":{"tag":{"const":"t"}}}]})",
                {R"({"id":1})", R"({"id":1,"tag":"t"})"}, {R"({"tag":"t"})"});
}

TEST(JsonSchemaGrammar, RefsAndRecursion) {
  const char* tree = R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
                          "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value","children"]}},
                          "$ref":"#/$defs/node"})";
  expect_schema(tree, {R"({"value":1,"children":[]})", R"({"value":1,"children":[{"value":2,"children":[{"value":3,"children":[]}]}]})"},
                {R"({"value":1,"children":[{"value":2}]})", R"({"value":1})"});
  expect_schema(R"({"definitions":{"s":{"type":"string"}},"type":"array","items":{"$ref":"#/definitions/s"}})",
                {R"(["a","b"])"}, {"[1]"});
  // A linked list through anyOf with null.
  expect_schema(R"({"$defs":{"list":{"anyOf":[{"type":"null"},{"type":"object","properties":{"next":{"$ref":"#/$defs/list"}},
                    "required":["next"]}]}},"$ref":"#/$defs/list"})",
                {"null", R"({"next":null})", R"({"next":{"next":null}})"}, {R"({"next":{}})"});
}

TEST(JsonSchemaGrammar, AnnotationsAreIgnored) {
  expect_schema(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","title":"T","description":"D",
                    "$comment":"c","default":1,"examples":[1],"type":"integer"})", {"5"}, {"\"5\""});
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  const auto g = json_schema_grammar(json::parse(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})"));
  EXPECT_TRUE(grammar_matches(g, "{ \"a\" : 1 }"));
  EXPECT_TRUE(grammar_matches(g, "{\n  \"a\": 1\n}"));
  EXPECT_TRUE(grammar_matches(g, "{\n" + std::string(20, ' ') + "\"a\":1}"));
  EXPECT_FALSE(grammar_matches(g, "{\n" + std::string(21, ' ') + "\"a\":1}"));
  EXPECT_FALSE(grammar_matches(g, "{  \"a\":1}"));
  EXPECT_FALSE(grammar_matches(g, "{\n\n\"a\":1}"));
  EXPECT_FALSE(grammar_matches(g, " {\"a\":1}"));  // nothing before the value
}

TEST(JsonSchemaGrammar, JsonObjectGrammar) {
  const auto g = json_object_grammar();
  EXPECT_EQ(g, json_object_grammar());  // built once
  for (const char* s : {"{}", R"({"a": [1, 2.5, "x", true, null, {"b": {}}]})"}) EXPECT_TRUE(grammar_matches(g, s)) << s;
  for (const char* s : {"[]", "1", R"({"a"})", R"({"a":1,})", "{'a':1}"}) EXPECT_FALSE(grammar_matches(g, s)) << s;
}

TEST(JsonSchemaGrammar, UnsupportedKeywordsNameTheKeywordAndPath) {
  auto err = [](const char* schema) { return error_of([&] { json_schema_grammar(json::parse(schema)); }); };
  EXPECT_EQ(err(R"({"type":"object","properties":{"a":{"type":"object","patternProperties":{}}}})"),
            "json_schema: unsupported keyword 'patternProperties' at /properties/a");
  EXPECT_EQ(err(R"({"type":"number","multipleOf":2})"), "json_schema: unsupported keyword 'multipleOf' at the root");
  EXPECT_EQ(err(R"({"type":"array","items":{"uniqueItems":true}})"), "json_schema: unsupported keyword 'uniqueItems' at /items");
  EXPECT_EQ(err(R"({"$defs":{"x":{"not":{}}},"$ref":"#/$defs/x"})"), "json_schema: unsupported keyword 'not' at /$defs/x");
  EXPECT_EQ(err(R"({"anyOf":[{"type":"string"},{"if":{}}]})"), "json_schema: unsupported keyword 'if' at /anyOf/1");
  EXPECT_EQ(err(R"({"properties":{"a/b":{"contains":{}}}})"), "json_schema: unsupported keyword 'contains' at /properties/a~1b");
  EXPECT_EQ(err(R"({"type":"number","minimum":1})"),
            "json_schema: 'minimum' on a number at the root is not supported (only on an integer)");
  EXPECT_EQ(err(R"({"type":"string","format":"hostname"})"), "json_schema: unsupported format 'hostname' at the root");
  EXPECT_EQ(err(R"({"type":"string","pattern":"^a","maxLength":3})"),
            "json_schema: 'pattern' beside 'minLength/maxLength' at the root is not supported");
  EXPECT_EQ(err(R"j({"type":"string","pattern":"a(?=b)"})j"),
            "json_schema: pattern at /pattern: unsupported lookaround '(?=' (at offset 2)");
  EXPECT_EQ(err(R"({"properties":{"p":{"type":"string","pattern":"(a)\\1"}}})"),
            "json_schema: pattern at /properties/p/pattern: unsupported backreference '\\1' (at offset 5)");
  EXPECT_EQ(err(R"({"type":"string","pattern":"\\bword"})"),
            "json_schema: pattern at /pattern: unsupported word boundary '\\b' (at offset 2)");
  EXPECT_EQ(err(R"({"type":"string","pattern":"\\p{L}"})"),
            "json_schema: pattern at /pattern: unsupported Unicode property '\\p' (at offset 2)");
  EXPECT_EQ(err(R"j({"type":"string","pattern":"(?<n>a)"})j"),
            "json_schema: pattern at /pattern: unsupported group '(?<' (named or flagged groups) (at offset 1)");
  EXPECT_EQ(err(R"({"type":"string","pattern":"a++"})"), "json_schema: pattern at /pattern: unsupported possessive quantifier (at offset 2)");
  EXPECT_EQ(err(R"({"type":"string","pattern":"a^b"})"),
            "json_schema: pattern at /pattern: anchor '^' after the start of the pattern (at offset 1)");
  EXPECT_EQ(err(R"({"$ref":"#/$defs/missing"})"), "json_schema: $ref '#/$defs/missing' at the root: no such definition");
  EXPECT_EQ(err(R"({"$ref":"other.json#/x"})"),
            "json_schema: $ref 'other.json#/x' at the root: only references into the schema itself (#/...) are supported");
  EXPECT_EQ(err(R"({"type":"date"})"), "json_schema: unknown type 'date' at the root");
  EXPECT_EQ(err(R"({"properties":{"a":{}},"required":["b"]})"),
            "json_schema: required property 'b' at the root is not in 'properties'");
  EXPECT_EQ(err(R"({"allOf":[{"type":"string"},{"type":"integer"}]})"),
            "json_schema: allOf at the root merges two different 'type' (only a plain merge is supported)");
  EXPECT_EQ(err(R"({"type":"integer","minimum":5,"maximum":4})"), "json_schema: no integer fits the bounds at the root");
  EXPECT_EQ(err(R"({"properties":{"a":false},"required":["a"]})"), "json_schema: the schema false at /properties/a allows no value");
  EXPECT_EQ(err(R"({"enum":[1],"minimum":0})"), "json_schema: keyword 'minimum' beside enum at the root is not supported");
}

TEST(JsonSchemaGrammar, GbnfTextParsesBack) {
  const std::string text = json_schema_to_gbnf(json::parse(R"({"type":"object","properties":{"n":{"type":"integer"}}})"));
  EXPECT_EQ(text.rfind("root ::= ", 0), 0u) << text;
  EXPECT_TRUE(grammar_matches(parse_gbnf(text), R"({"n":1})"));
}

}  // namespace
}  // namespace r1pi
