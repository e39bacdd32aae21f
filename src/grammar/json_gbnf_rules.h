// The fixed GBNF rules of JSON (values, strings, numbers, whitespace) and of the string formats,
// in one table. The JSON Schema converter copies the ones a schema uses into its grammar.
//
// Whitespace policy: wherever JSON allows whitespace the grammar allows none, one space, or a
// newline followed by up to 20 spaces or tabs ("ws"), never more: a model that likes spaces can
// only ever spend a bounded number of tokens on them. Numbers have at most 16 digits in each part.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace r1pi {

struct JsonRule {
  std::string_view name;
  std::string_view body;    // GBNF; it may name other rules of the table
  std::string_view format;  // the JSON Schema "format" this rule spells (a string's content), or ""
};

// nullptr when there is no such rule / format.
const JsonRule* find_json_rule(std::string_view name);
const JsonRule* find_json_format(std::string_view format);
// The table's rule names a body refers to.
std::vector<std::string> json_rule_references(std::string_view body);
// Every rule name of the table (reserved: the converter names nothing else so).
std::vector<std::string> json_rule_names();

}  // namespace r1pi
