// additionalProperties after named properties (json_schema_grammar.cpp): the JSON spellings of a
// key that is none of the names, decided character by character over a trie of the names (the
// key-char rule spells each character one way only). The rule includes the closing quote and the
// whitespace after it. use(name) names a shared rule of the grammar (it is added once);
// rule(hint, body) adds a rule and returns its name.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace r1pi {

std::string other_key_rule(const std::vector<std::string>& names, const std::string& hint,
                           const std::function<std::string(const std::string&)>& use,
                           const std::function<std::string(const std::string&, const std::string&)>& rule);

}  // namespace r1pi
