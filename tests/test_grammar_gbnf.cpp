// GBNF (llama.cpp's grammar syntax): every construct parsed and matched, every error with its line
// and column, left recursion refused, and to_gbnf's text read back to the same language.
#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "grammar/grammar_test_support.h"
#include "test_support.h"

namespace r1pi {
namespace {

using test::error_of;
using test::grammar_matches;

struct Case {
  const char* grammar;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

void expect_language(const Case& c) {
  SCOPED_TRACE(c.grammar);
  const auto g = parse_gbnf(c.grammar);
  for (const std::string& s : c.accepted) EXPECT_TRUE(grammar_matches(g, s)) << "should match: '" << s << "'";
  for (const std::string& s : c.rejected) EXPECT_FALSE(grammar_matches(g, s)) << "should not match: '" << s << "'";
  // The debugging text is GBNF for the same language.
  const auto again = parse_gbnf(to_gbnf(*g));
  for (const std::string& s : c.accepted) EXPECT_TRUE(grammar_matches(again, s)) << to_gbnf(*g);
  for (const std::string& s : c.rejected) EXPECT_FALSE(grammar_matches(again, s)) << to_gbnf(*g);
}

TEST(Gbnf, SequencesAlternativesAndGroups) {
  expect_language({R"(root ::= "a" "b" | "c" ( "d" | "e" ) )", {"ab", "cd", "ce"}, {"", "a", "ac", "cde", "abc"}});
  expect_language({"root ::= greeting \" \" name\ngreeting ::= \"hi\" | \"hello\"\nname ::= \"bob\"",
                   {"hi bob", "hello bob"}, {"hibob", "hello", "hey bob"}});
  expect_language({R"(root ::= "")", {""}, {"a"}});
}

TEST(Gbnf, Repetitions) {
  expect_language({R"(root ::= "a"*)", {"", "a", "aaaa"}, {"b", "ab"}});
  expect_language({R"(root ::= "a"+)", {"a", "aaa"}, {""}});
  expect_language({R"(root ::= "a"? "b")", {"b", "ab"}, {"aab", "a"}});
  expect_language({R"(root ::= "ab"{2})", {"abab"}, {"ab", "ababab", "aabb"}});
  expect_language({R"(root ::= "a"{2,})", {"aa", "aaaaa"}, {"", "a"}});
  expect_language({R"(root ::= [0-9]{1,3})", {"1", "12", "123"}, {"", "1234", "a"}});
  expect_language({R"(root ::= ("x" | "y"){0,2} "z")", {"z", "xz", "yxz"}, {"xyxz"}});
  expect_language({R"(root ::= "a" { 1 , 2 })", {"a", "aa"}, {"", "aaa"}});
}

TEST(Gbnf, LiteralEscapes) {
  expect_language({R"(root ::= "\n\t\r\\\"\x41\u00e9\U0001F600")", {"\n\t\r\\\"A\xC3\xA9\xF0\x9F\x98\x80"}, {"\n"}});
  expect_language({"root ::= \"caf\xC3\xA9\"", {"caf\xC3\xA9"}, {"cafe"}});  // UTF-8 as written
}

TEST(Gbnf, CharacterClasses) {
  expect_language({"root ::= [a-c_]+", {"abc", "a_b"}, {"abd", ""}});
  expect_language({R"(root ::= [^"\\]*)", {"abc", "x y", "\xC3\xA9"}, {"a\"", "\\"}});
  expect_language({R"(root ::= [\x00-\x1F\]\-])", {"\x01", "]", "-"}, {"a"}});
  expect_language({"root ::= [-a]", {"-", "a"}, {"b"}});
  expect_language({R"(root ::= [\u00e0-\u00ff])", {"\xC3\xA9"}, {"e"}});
  expect_language({"root ::= . .", {"ab", "\xE4\xB8\xAD\xE6\x96\x87", "\n\n"}, {"a", "abc"}});
}

TEST(Gbnf, CommentsAndLayout) {
  expect_language({"# a comment\nroot ::= a # after a rule\n\n  # indented comment\na ::= (\n  \"x\" |\n  \"y\"\n)\n",
                   {"x", "y"}, {"", "xy"}});
  expect_language({"root ::=\n  \"a\" |\n  \"b\"", {"a", "b"}, {"ab"}});
  expect_language({"root ::= \"a\"\r\n", {"a"}, {}});
}

TEST(Gbnf, RecursionThatIsNotLeftRecursion) {
  expect_language({"root ::= \"(\" root \")\" | \"\"", {"", "()", "((()))"}, {"(()", ")("}});
  expect_language({"root ::= item (\",\" item)*\nitem ::= [a-z] | \"[\" root \"]\"", {"a", "a,[b,[c]],d"}, {"a,", "[a"}});
}

TEST(Gbnf, ErrorsGiveLineAndColumn) {
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\"\nfoo ::= bar\n"); }), "grammar: line 2, column 9: undefined rule 'bar'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\n"); }), "grammar: line 1, column 12: unterminated string literal");
  EXPECT_EQ(error_of([] { parse_gbnf("root := \"a\""); }), "grammar: line 1, column 6: expected '::='");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= [a-"); }), "grammar: line 1, column 13: unterminated character class");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= ( \"a\" "); }), "grammar: line 1, column 16: expected ')'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= * \"a\""); }), "grammar: line 1, column 10: expected an item before '*'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\"{3,1}"); }), "grammar: line 1, column 17: repetition {3,1}: max below min");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\"{x}"); }), "grammar: line 1, column 14: expected a number");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\"{2"); }), "grammar: line 1, column 15: expected '}'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"\\q\""); }), "grammar: line 1, column 11: unknown escape '\\q'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"\\x4\""); }), "grammar: line 1, column 14: expected 2 hex digits");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= [z-a]"); }), "grammar: line 1, column 14: character range ends below its start");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\" }"); }), "grammar: line 1, column 14: expected the end of the line");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"a\"\nroot ::= \"b\""); }), "grammar: line 2, column 1: rule 'root' is defined twice");
  EXPECT_EQ(error_of([] { parse_gbnf("\n\n  ::= \"a\""); }), "grammar: line 3, column 3: expected a rule name");
  EXPECT_EQ(error_of([] { parse_gbnf("start ::= \"a\""); }), "grammar: no rule named 'root'");
  EXPECT_EQ(error_of([] { parse_gbnf(""); }), "grammar: no rule named 'root'");
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= \"\xC3\xA9\" x"); }), "grammar: line 1, column 14: undefined rule 'x'");
}

TEST(Gbnf, LeftRecursionIsRefused) {
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= root \"a\" | \"a\""); }),
            "grammar: rule 'root' is left-recursive (root -> root); write the repetition with * or + instead");
  // Through another rule and a rule that can be empty.
  EXPECT_EQ(error_of([] { parse_gbnf("root ::= opt expr\nopt ::= \"\" | \"-\"\nexpr ::= root \"+\" | \"1\""); }),
            "grammar: rule 'root' is left-recursive (root -> expr -> root); write the repetition with * or + instead");
}

TEST(Gbnf, AcceptIsAllOrNothing) {
  GrammarState state(parse_gbnf(R"(root ::= "abc" | "abd")"));
  EXPECT_TRUE(state.accept("ab"));
  EXPECT_FALSE(state.can_end());
  EXPECT_FALSE(state.accept("cx"));  // 'c' alone would be allowed: nothing of "cx" is taken
  GrammarState copy = state;
  EXPECT_TRUE(copy.accept("d"));
  EXPECT_TRUE(copy.can_end());
  EXPECT_TRUE(state.accept("c"));  // the original never moved
  EXPECT_TRUE(state.can_end());
  EXPECT_FALSE(state.accept("c"));
}

TEST(Gbnf, PartialUtf8Characters) {
  const auto g = parse_gbnf("root ::= [\\u4e00-\\u9fff]+");
  GrammarState state(g);
  EXPECT_TRUE(state.accept("\xE4"));      // U+4E2D begins E4 B8 AD
  EXPECT_FALSE(state.can_end());
  EXPECT_TRUE(state.accept("\xB8\xAD"));
  EXPECT_TRUE(state.can_end());
  EXPECT_FALSE(state.accept("\xC3"));     // no completion of C3 lies in the class
  EXPECT_FALSE(state.accept("\xB8"));     // a continuation byte with no start
  EXPECT_FALSE(state.accept("\xE0\x80")); // overlong
  EXPECT_TRUE(test::grammar_accepts_prefix(parse_gbnf("root ::= [^a]"), "\xF0\x9F"));
  EXPECT_FALSE(test::grammar_accepts_prefix(parse_gbnf("root ::= [^a]"), "\xF5"));  // above U+10FFFF
  EXPECT_FALSE(test::grammar_accepts_prefix(parse_gbnf("root ::= [^a]"), "\xED\xA0"));  // only surrogates follow
  EXPECT_TRUE(test::grammar_accepts_prefix(parse_gbnf("root ::= [^a]"), "\xED\x9F"));   // U+D7C0..U+D7FF
}

}  // namespace
}  // namespace r1pi
