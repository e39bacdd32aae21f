#include "grammar/other_key_rule.h"

#include <map>
#include <optional>

#include "common/error.h"
#include "grammar/char_set.h"
#include "grammar/gbnf_text.h"
#include "grammar/text_scan.h"

namespace r1pi {

std::string other_key_rule(const std::vector<std::string>& names, const std::string& hint,
                         const std::function<std::string(const std::string&)>& use,
                         const std::function<std::string(const std::string&, const std::string&)>& rule) {
  struct Node {
    std::map<uint32_t, size_t> children;
    bool terminal = false;
  };
  std::vector<Node> trie(1);
  for (const std::string& name : names) {
    size_t at = 0;
    for (size_t i = 0; i < name.size();) {
      const std::optional<uint32_t> cp = read_utf8_char(name, i);
      if (!cp) throw Error("json_schema: property name '" + name + "' is not valid UTF-8");
      auto it = trie[at].children.find(*cp);
      if (it == trie[at].children.end()) {
        trie.emplace_back();
        it = trie[at].children.emplace(*cp, trie.size() - 1).first;
      }
      at = it->second;
    }
    trie[at].terminal = true;
  }
  // A character's one spelling under key-char, or "" when it has none.
  auto spelling = [](uint32_t cp) -> std::string {
    static const std::map<uint32_t, char> escapes = {{'"', '"'}, {'\\', '\\'}, {'\b', 'b'}, {'\f', 'f'},
                                                     {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}};
    if (auto it = escapes.find(cp); it != escapes.end()) return gbnf_literal(std::string("\\") + it->second);
    if (cp < 0x20 || cp == 0x7F) return "";
    return gbnf_class(CharSet({{cp, cp}}, false));
  };
  const std::string rest = use("key-rest");
  std::function<std::string(size_t)> node_rule = [&](size_t at) -> std::string {
    std::vector<std::string> alts;
    if (!trie[at].terminal) alts.push_back(R"("\"" )" + use("ws"));
    std::vector<CharSet::Range> excluded = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}};
    std::string other_escapes;
    for (const char e : std::string("\"\\bfnrt")) {
      const uint32_t cp = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : uint32_t(e);
      if (!trie[at].children.count(cp)) other_escapes += e == '"' || e == '\\' ? std::string("\\") + e : std::string(1, e);
    }
    for (const auto& [cp, child] : trie[at].children) {
      excluded.push_back({cp, cp});
      const std::string spelt = spelling(cp);
      if (!spelt.empty()) alts.push_back(spelt + " " + node_rule(child));
    }
    const CharSet other(excluded, true);
    if (!other.ranges().empty()) alts.push_back(gbnf_class(other) + " " + rest);
    if (!other_escapes.empty()) alts.push_back(R"([\\] [)" + other_escapes + "] " + rest);
    std::string body;
    for (const std::string& a : alts) body += (body.empty() ? "" : " | ") + a;
    return rule(hint, body);
  };
  return rule(hint, R"("\"" )" + node_rule(0));
}

}  // namespace r1pi
