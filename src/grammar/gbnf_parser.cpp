#include "grammar/gbnf_parser.h"

#include <map>
#include <set>

#include "common/error.h"
#include "grammar/text_scan.h"

namespace r1pi {
namespace {

using Element = Grammar::Element;
using Kind = Grammar::Kind;
using Sequence = Grammar::Sequence;

// A repetition count above this would lay out that many copies of its item: a typo, not a grammar.
constexpr uint32_t kMaxRepetition = 100000;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::shared_ptr<const Grammar> parse() {
    skip_space(true);
    while (pos_ < text_.size()) {
      parse_rule();
      skip_space(true);
    }
    for (const auto& [id, where] : first_use_)
      if (!defined_[id]) fail_at(where, "undefined rule '" + names_[id] + "'");
    const auto root = ids_.find("root");
    if (root == ids_.end() || !defined_[root->second]) throw Error("grammar: no rule named 'root'");
    name_generated_rules();
    return std::make_shared<const Grammar>(layout_grammar(names_, rules_, sets_, root->second));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<bool> generated_;
  std::vector<std::vector<Sequence>> rules_;
  std::map<std::string, uint32_t, std::less<>> ids_;  // the written names
  std::map<uint32_t, size_t> first_use_;               // rule id -> offset of its first reference
  std::vector<CharSet> sets_;
  std::map<std::vector<CharSet::Range>, uint32_t> set_ids_;  // one element set per distinct set

  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n')
        ++line, column = 1;
      else if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80)  // count characters, not bytes
        ++column;
    }
    throw Error("grammar: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  // Spaces, tabs and comments; newlines too where a rule may go on (newline_ok).
  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(text_[pos_])) ++pos_;
    if (pos_ == start) fail("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  uint32_t rule_id(const std::string& name) {
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    const uint32_t id = new_rule(name, false);
    ids_.emplace(name, id);
    return id;
  }
  uint32_t new_rule(const std::string& name, bool generated) {
    names_.push_back(name);
    defined_.push_back(generated);
    generated_.push_back(generated);
    rules_.emplace_back();
    return uint32_t(names_.size() - 1);
  }

  Element chars(CharSet set) {
    const auto [it, fresh] = set_ids_.emplace(set.ranges(), uint32_t(sets_.size()));
    if (fresh) sets_.push_back(std::move(set));
    return {Kind::Chars, it->second};
  }

  void parse_rule() {
    const size_t name_at = pos_;
    const std::string name = parse_name();
    const uint32_t id = rule_id(name);
    if (defined_[id]) fail_at(name_at, "rule '" + name + "' is defined twice");
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") fail("expected '::='");
    pos_ += 3;
    skip_space(true);
    defined_[id] = true;
    std::vector<Sequence> alternatives = parse_alternatives(name, false);
    rules_[id] = std::move(alternatives);
    skip_space(false);
    if (!at_end() && peek() != '\n' && peek() != '\r') fail("expected the end of the line");
  }

  std::vector<Sequence> parse_alternatives(const std::string& rule_name, bool nested) {
    std::vector<Sequence> alternatives;
    alternatives.push_back(parse_sequence(rule_name, nested));
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alternatives.push_back(parse_sequence(rule_name, nested));
    }
    return alternatives;
  }

  Sequence parse_sequence(const std::string& rule_name, bool nested) {
    Sequence seq;
    size_t last_item = std::string::npos;  // where the item a repetition applies to starts
    while (!at_end()) {
      const char c = peek();
      const size_t item_start = seq.size();
      if (c == '"') {
        ++pos_;
        while (peek() != '"') {
          if (at_end() || peek() == '\n') fail("unterminated string literal");
          const uint32_t cp = parse_char();
          seq.push_back(chars(CharSet({{cp, cp}}, false)));
        }
        ++pos_;
        last_item = item_start;
      } else if (c == '[') {
        seq.push_back(chars(parse_class()));
        last_item = item_start;
      } else if (c == '.') {
        ++pos_;
        seq.push_back(chars(CharSet::any()));
        last_item = item_start;
      } else if (is_name_char(c)) {
        const size_t at = pos_;
        const uint32_t id = rule_id(parse_name());
        first_use_.emplace(id, at);
        seq.push_back({Kind::Rule, id});
        last_item = item_start;
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        const uint32_t id = new_rule(rule_name, true);
        rules_[id] = parse_alternatives(rule_name, true);
        if (peek() != ')') fail("expected ')'");
        ++pos_;
        seq.push_back({Kind::Rule, id});
        last_item = item_start;
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (last_item == std::string::npos) fail(std::string("expected an item before '") + c + "'");
        const auto [min, max] = parse_repetition();
        repeat(rule_name, seq, last_item, min, max);
        last_item = std::string::npos;
      } else {
        break;
      }
      skip_space(nested);
    }
    return seq;
  }

  // {min, max}; max == UINT32_MAX: unbounded.
  std::pair<uint32_t, uint32_t> parse_repetition() {
    const char c = text_[pos_++];
    if (c == '*') return {0, UINT32_MAX};
    if (c == '+') return {1, UINT32_MAX};
    if (c == '?') return {0, 1};
    skip_space(false);
    const uint32_t min = parse_count();
    uint32_t max = min;
    skip_space(false);
    if (peek() == ',') {
      ++pos_;
      skip_space(false);
      max = peek() == '}' ? UINT32_MAX : parse_count();
      skip_space(false);
    }
    if (peek() != '}') fail("expected '}'");
    if (max < min) fail("repetition {" + std::to_string(min) + "," + std::to_string(max) + "}: max below min");
    ++pos_;
    return {min, max};
  }

  uint32_t parse_count() {
    if (peek() < '0' || peek() > '9') fail("expected a number");
    uint64_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      n = n * 10 + uint64_t(peek() - '0');
      if (n > kMaxRepetition) fail("repetition count above " + std::to_string(kMaxRepetition));
      ++pos_;
    }
    return uint32_t(n);
  }

  // x{min,max} in place of the item seq[from..]: min copies, then either x-rep ::= x x-rep | ""
  // (unbounded) or a chain of max - min nested optionals (x-opt1 ::= x | "", x-optk ::= x x-opt(k-1) | "").
  void repeat(const std::string& rule_name, Sequence& seq, size_t from, uint32_t min, uint32_t max) {
    const Sequence item(seq.begin() + long(from), seq.end());
    seq.resize(from);
    for (uint32_t i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
    if (max == min) return;
    if (max == UINT32_MAX) {
      const uint32_t rep = new_rule(rule_name, true);
      Sequence again = item;
      again.push_back({Kind::Rule, rep});
      rules_[rep] = {again, {}};
      seq.push_back({Kind::Rule, rep});
      return;
    }
    uint32_t inner = 0;
    for (uint32_t k = 0; k < max - min; ++k) {
      const uint32_t opt = new_rule(rule_name, true);
      Sequence once = item;
      if (k > 0) once.push_back({Kind::Rule, inner});
      rules_[opt] = {once, {}};
      inner = opt;
    }
    seq.push_back({Kind::Rule, inner});
  }

  CharSet parse_class() {
    ++pos_;  // '['
    const bool negate = peek() == '^';
    if (negate) ++pos_;
    std::vector<CharSet::Range> ranges;
    while (peek() != ']') {
      if (at_end() || peek() == '\n') fail("unterminated character class");
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        hi = parse_char();
        if (hi < lo) fail("character range ends below its start");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return CharSet(std::move(ranges), negate);
  }

  // One character of a literal or class: an escape or one UTF-8 character.
  uint32_t parse_char() {
    const size_t at = pos_;
    const unsigned char c = static_cast<unsigned char>(text_[pos_++]);
    if (c == '\\') {
      if (at_end()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case 'n': return '\n';
        case 't': return '\t';
        case 'r': return '\r';
        case '\\': case '"': case '[': case ']': case '-': case '^': case '/':
          return uint32_t(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default: fail_at(at, std::string("unknown escape '\\") + e + "'");
      }
    }
    if (c < 0x80) return c;
    pos_ = at;
    const std::optional<uint32_t> cp = read_utf8_char(text_, pos_);
    if (!cp) fail_at(at, "invalid UTF-8");
    return *cp;
  }

  uint32_t parse_hex(int digits) {
    const std::optional<uint32_t> v = read_hex(text_, pos_, digits);
    if (!v) fail("expected " + std::to_string(digits) + " hex digits");
    if (*v > kMaxCodePoint) fail("code point above U+10FFFF");
    return *v;
  }

  // Generated rules (groups, repetitions) are named after their rule: "name-1", "name-2", ...,
  // skipping any name the grammar writes itself.
  void name_generated_rules() {
    std::set<std::string> taken(names_.begin(), names_.end());
    std::map<std::string, int> next;
    for (size_t r = 0; r < names_.size(); ++r) {
      if (!generated_[r]) continue;
      std::string name;
      do name = names_[r] + "-" + std::to_string(++next[names_[r]]);
      while (taken.count(name));
      taken.insert(name);
      names_[r] = name;
    }
  }
};

}  // namespace

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text) { return Parser(text).parse(); }

}  // namespace r1pi
