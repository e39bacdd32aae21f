#include "grammar/grammar.h"

#include <functional>

#include "common/error.h"
#include "grammar/gbnf_text.h"

namespace r1pi {
namespace {

using Element = Grammar::Element;
using Kind = Grammar::Kind;

// Rules that can match the empty string: a fixed point over "some alternative has only nullable
// rule references".
std::vector<bool> nullable_rules(const std::vector<std::vector<Grammar::Sequence>>& rules) {
  std::vector<bool> nullable(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      if (nullable[r]) continue;
      for (const Grammar::Sequence& alt : rules[r]) {
        bool all = true;
        for (const Element& e : alt) all = all && e.kind == Kind::Rule && nullable[e.index];
        if (all) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  return nullable;
}

void refuse_left_recursion(const std::vector<std::string>& names,
                           const std::vector<std::vector<Grammar::Sequence>>& rules) {
  const std::vector<bool> nullable = nullable_rules(rules);
  // left[r]: the rules r may expand first, before any character.
  std::vector<std::vector<uint32_t>> left(rules.size());
  for (size_t r = 0; r < rules.size(); ++r)
    for (const Grammar::Sequence& alt : rules[r])
      for (const Element& e : alt) {
        if (e.kind != Kind::Rule) break;
        left[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
  enum Mark : uint8_t { Unseen, OnPath, Done };
  std::vector<Mark> mark(rules.size(), Unseen);
  std::vector<uint32_t> path;
  std::function<void(uint32_t)> visit = [&](uint32_t r) {
    mark[r] = OnPath;
    path.push_back(r);
    for (uint32_t next : left[r]) {
      if (mark[next] == OnPath) {
        std::string cycle;
        bool in = false;
        for (uint32_t p : path) {
          in = in || p == next;
          if (in) cycle += names[p] + " -> ";
        }
        throw Error("grammar: rule '" + names[next] + "' is left-recursive (" + cycle + names[next] +
                    "); write the repetition with * or + instead");
      }
      if (mark[next] == Unseen) visit(next);
    }
    path.pop_back();
    mark[r] = Done;
  };
  for (uint32_t r = 0; r < rules.size(); ++r)
    if (mark[r] == Unseen) visit(r);
}

}  // namespace

Grammar layout_grammar(std::vector<std::string> names, const std::vector<std::vector<Grammar::Sequence>>& rules,
                       std::vector<CharSet> sets, uint32_t root) {
  refuse_left_recursion(names, rules);
  Grammar g;
  g.names = std::move(names);
  g.sets = std::move(sets);
  g.root = root;
  g.alternatives.resize(rules.size());
  for (size_t r = 0; r < rules.size(); ++r)
    for (const Grammar::Sequence& alt : rules[r]) {
      g.alternatives[r].push_back(uint32_t(g.elements.size()));
      g.elements.insert(g.elements.end(), alt.begin(), alt.end());
      g.elements.push_back({Kind::End, 0});
    }
  return g;
}

std::string to_gbnf(const Grammar& g) {
  std::string out;
  auto write_rule = [&](uint32_t r) {
    out += g.names[r] + " ::=";
    for (size_t a = 0; a < g.alternatives[r].size(); ++a) {
      if (a > 0) out += " |";
      if (g.elements[g.alternatives[r][a]].kind == Kind::End) out += " \"\"";
      for (uint32_t p = g.alternatives[r][a]; g.elements[p].kind != Kind::End; ++p) {
        const Element& e = g.elements[p];
        out += ' ';
        out += e.kind == Kind::Rule ? g.names[e.index] : gbnf_class(g.sets[e.index]);
      }
    }
    out += '\n';
  };
  write_rule(g.root);
  for (uint32_t r = 0; r < g.n_rules(); ++r)
    if (r != g.root) write_rule(r);
  return out;
}

}  // namespace r1pi
