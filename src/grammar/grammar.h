// A context-free grammar over Unicode code points, laid out for the matcher (matcher.h): every
// rule is a list of alternatives, every alternative a run of elements in one flat array ended by
// an End element. Repetitions (* + ? {m,n}) are already rewritten into generated rules, string
// literals into one character element per code point. Built by parse_gbnf (gbnf_parser.h), which
// json_schema_grammar (json_schema_grammar.h) feeds; immutable once built and shared by every
// matcher state (std::shared_ptr<const Grammar>).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/char_set.h"

namespace r1pi {

struct Grammar {
  enum class Kind : uint8_t { Chars, Rule, End };
  struct Element {
    Kind kind;
    uint32_t index;  // Chars: into sets; Rule: the rule id; End: unused
    bool operator==(const Element&) const = default;
  };
  using Sequence = std::vector<Element>;  // one alternative before layout (no End)

  std::vector<Element> elements;
  std::vector<std::vector<uint32_t>> alternatives;  // per rule: where each alternative starts
  std::vector<std::string> names;                   // per rule, unique
  std::vector<CharSet> sets;
  uint32_t root = 0;

  size_t n_rules() const { return names.size(); }
};

// Lays the rules out as above and refuses left recursion (a rule that can reach itself before
// consuming a character would expand forever): r1pi::Error "grammar: rule 'x' is left-recursive
// (x -> y -> x)". rules[i] holds rule i's alternatives; element indices refer to rules and sets.
Grammar layout_grammar(std::vector<std::string> names, const std::vector<std::vector<Grammar::Sequence>>& rules,
                       std::vector<CharSet> sets, uint32_t root);

// The grammar as GBNF text that parse_gbnf reads back (one rule per line, root first; generated
// rules under their generated names): for debugging and for the docs.
std::string to_gbnf(const Grammar& grammar);

}  // namespace r1pi
