#include "grammar/json_gbnf_rules.h"

#include <array>

namespace r1pi {
namespace {

constexpr std::array kRules = {
    JsonRule{"ws", R"(| " " | "\n" [ \t]{0,20})", ""},
    JsonRule{"char", R"([^"\\\x7F\x00-\x1F] | [\\] (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))", ""},
    // A key outside a known set: one spelling per character (no \u or \/), so "not one of the
    // known names" can be decided character by character.
    JsonRule{"key-char", R"([^"\\\x7F\x00-\x1F] | [\\] ["\\bfnrt])", ""},
    JsonRule{"key-rest", R"(key-char* "\"" ws)", ""},
    JsonRule{"string", R"("\"" char* "\"" ws)", ""},
    JsonRule{"integral-part", R"([0] | [1-9] [0-9]{0,15})", ""},
    JsonRule{"decimal-part", R"([0-9]{1,16})", ""},
    JsonRule{"integer", R"("-"? integral-part ws)", ""},
    JsonRule{"number", R"("-"? integral-part ("." decimal-part)? ([eE] [-+]? integral-part)? ws)", ""},
    JsonRule{"boolean", R"(("true" | "false") ws)", ""},
    JsonRule{"null", R"("null" ws)", ""},
    JsonRule{"value", R"(object | array | string | number | boolean | null)", ""},
    JsonRule{"object", R"("{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws)", ""},
    JsonRule{"array", R"("[" ws (value ("," ws value)*)? "]" ws)", ""},
    // Days 29-31 only where every year has them (February stops at 28): always a valid date.
    JsonRule{"date", R"([1-9] [0-9]{3} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8])))", "date"},
    JsonRule{"time", R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))", "time"},
    JsonRule{"date-time", R"(date "T" time)", "date-time"},
    JsonRule{"uuid", R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})", "uuid"},
    JsonRule{"email", R"([A-Za-z0-9._%+-]{1,64} "@" [A-Za-z0-9] [A-Za-z0-9-]{0,62} ("." [A-Za-z0-9] [A-Za-z0-9-]{0,62}){1,4})", "email"},
};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

const JsonRule* find_json_rule(std::string_view name) {
  for (const JsonRule& r : kRules)
    if (r.name == name) return &r;
  return nullptr;
}

const JsonRule* find_json_format(std::string_view format) {
  for (const JsonRule& r : kRules)
    if (!r.format.empty() && r.format == format) return &r;
  return nullptr;
}

std::vector<std::string> json_rule_references(std::string_view body) {
  std::vector<std::string> names;
  for (size_t i = 0; i < body.size();) {
    const char c = body[i];
    if (c == '"' || c == '[') {  // skip a literal or a class, with its escapes
      const char close = c == '"' ? '"' : ']';
      for (++i; i < body.size() && body[i] != close; ++i)
        if (body[i] == '\\') ++i;
      ++i;
    } else if (c == '{') {  // a repetition count
      while (i < body.size() && body[i] != '}') ++i;
    } else if (is_name_char(c)) {
      const size_t start = i;
      while (i < body.size() && is_name_char(body[i])) ++i;
      const std::string_view name = body.substr(start, i - start);
      if (find_json_rule(name)) names.emplace_back(name);
    } else {
      ++i;
    }
  }
  return names;
}

std::vector<std::string> json_rule_names() {
  std::vector<std::string> names;
  for (const JsonRule& r : kRules) names.emplace_back(r.name);
  return names;
}

}  // namespace r1pi
