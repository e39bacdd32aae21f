#include "grammar/schema_pattern.h"

#include <vector>

#include "common/error.h"
#include "grammar/char_set.h"
#include "grammar/json_string_chars.h"
#include "grammar/text_scan.h"

namespace r1pi {
namespace {

using Ranges = std::vector<CharSet::Range>;

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{'\t', '\r'}, {' ', ' '}};

class PatternParser {
 public:
  PatternParser(std::string_view pattern, const std::string& path, const std::string& any_char)
      : p_(pattern), path_(path), any_char_(any_char) {}

  std::string parse() {
    std::string out = alternatives(true);
    if (pos_ < p_.size()) fail("unbalanced ')'");
    return out;
  }

 private:
  std::string_view p_;
  size_t pos_ = 0;
  const std::string& path_;
  const std::string& any_char_;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("json_schema: pattern at " + path_ + ": " + what + " (at offset " + std::to_string(pos_) + ")");
  }
  bool at_end() const { return pos_ >= p_.size(); }
  char peek() const { return at_end() ? '\0' : p_[pos_]; }

  std::string alternatives(bool top) {
    std::vector<std::string> alts = {sequence(top)};
    while (peek() == '|') {
      ++pos_;
      alts.push_back(sequence(top));
    }
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
  }

  // A top-level alternative is searched for: free characters on each side without an anchor.
  std::string sequence(bool top) {
    std::string out;
    const bool anchored_start = top && peek() == '^';
    if (anchored_start) ++pos_;
    bool anchored_end = false;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        ++pos_;
        if (!top || (!at_end() && peek() != '|')) fail("anchor '$' before the end of the pattern");
        anchored_end = true;
        break;
      }
      if (peek() == '^') fail("anchor '^' after the start of the pattern");
      const std::string item = atom();
      out += ' ';
      out += quantified(item);
    }
    if (top && !anchored_start) out = " " + any_char_ + "*" + out;
    if (top && !anchored_end) out += " " + any_char_ + "*";
    if (out.empty()) return "\"\"";
    out[0] = '(';  // in place of the leading space
    return out + ")";
  }

  std::string quantified(const std::string& item) {
    std::string suffix;
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      suffix = std::string(1, c);
    } else if (c == '{') {
      ++pos_;
      const size_t min = count();
      suffix = '{' + std::to_string(min);
      if (peek() == ',') {
        ++pos_;
        suffix += ",";
        if (peek() != '}') {
          const size_t max = count();
          if (max < min) fail("quantifier {" + std::to_string(min) + "," + std::to_string(max) + "}: max below min");
          suffix += std::to_string(max);
        }
      }
      if (peek() != '}') fail("expected '}' in a quantifier");
      ++pos_;
      suffix += "}";
    } else {
      return item;
    }
    if (peek() == '?') ++pos_;  // lazy: the same strings
    else if (peek() == '+') fail("unsupported possessive quantifier");
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') fail("unsupported quantifier of a quantifier");
    return "(" + item + ")" + suffix;
  }

  size_t count() {
    if (peek() < '0' || peek() > '9') fail("expected a number in a quantifier");
    size_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      n = n * 10 + size_t(p_[pos_++] - '0');
      if (n > 10000) fail("quantifier count above 10000");
    }
    return n;
  }

  std::string atom() {
    const char c = peek();
    if (c == '(') {
      ++pos_;
      if (peek() == '?') {
        if (p_.substr(pos_, 2) != "?:") {
          const std::string_view what = p_.substr(pos_, 3);
          fail(what.starts_with("?=") || what.starts_with("?!") || what.starts_with("?<=") || what.starts_with("?<!")
                   ? "unsupported lookaround '(" + std::string(what.substr(0, what[1] == '<' ? 3 : 2)) + "'"
                   : "unsupported group '(" + std::string(what.substr(0, 2)) + "' (named or flagged groups)");
        }
        pos_ += 2;
      }
      std::string inner = alternatives(false);
      if (peek() != ')') fail("missing ')'");
      ++pos_;
      return "(" + inner + ")";
    }
    if (c == '[') return set_text(char_class());
    if (c == '.') {
      ++pos_;
      return set_text(CharSet({{'\n', '\n'}}, true));
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') fail(std::string("nothing to repeat before '") + c + "'");
    if (c == '\\') {
      Ranges ranges;
      bool negate = false;
      escape(ranges, negate);
      return set_text(CharSet(ranges, negate));
    }
    const uint32_t cp = utf8_char();
    return set_text(CharSet({{cp, cp}}, false));
  }

  std::string set_text(const CharSet& set) {
    std::string text = json_string_chars(set);
    if (text.empty()) fail("a character class that matches nothing");
    return text;
  }

  CharSet char_class() {
    ++pos_;  // '['
    const bool negate = peek() == '^';
    if (negate) ++pos_;
    Ranges ranges;
    while (peek() != ']') {
      if (at_end()) fail("unterminated character class");
      if (p_.substr(pos_, 2) == "[:") fail("unsupported POSIX class '[:'");
      uint32_t lo = 0;
      if (peek() == '\\') {
        Ranges escaped;
        bool escaped_negate = false;
        escape(escaped, escaped_negate);
        const CharSet set(escaped, escaped_negate);
        if (set.ranges().size() != 1 || set.ranges()[0].first != set.ranges()[0].second) {
          ranges.insert(ranges.end(), set.ranges().begin(), set.ranges().end());  // \d, \w, ... in a class
          continue;
        }
        lo = set.ranges()[0].first;
      } else {
        lo = utf8_char();
      }
      uint32_t hi = lo;
      if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        if (peek() == '\\') {
          Ranges escaped;
          bool escaped_negate = false;
          escape(escaped, escaped_negate);
          if (escaped.size() != 1 || escaped_negate || escaped[0].first != escaped[0].second)
            fail("a class range ending in a class escape");
          hi = escaped[0].first;
        } else {
          hi = utf8_char();
        }
        if (hi < lo) fail("a class range that ends below its start");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return CharSet(ranges, negate);
  }

  // After '\\': the set it stands for (negate: its complement).
  void escape(Ranges& ranges, bool& negate) {
    ++pos_;
    if (at_end()) fail("a pattern ending in '\\'");
    const char e = p_[pos_++];
    auto one = [&](uint32_t cp) { ranges = {{cp, cp}}; };
    switch (e) {
      case 'd': ranges = kDigit; return;
      case 'D': ranges = kDigit, negate = true; return;
      case 'w': ranges = kWord; return;
      case 'W': ranges = kWord, negate = true; return;
      case 's': ranges = kSpace; return;
      case 'S': ranges = kSpace, negate = true; return;
      case 't': one('\t'); return;
      case 'n': one('\n'); return;
      case 'r': one('\r'); return;
      case 'f': one('\f'); return;
      case 'v': one('\v'); return;
      case 'x': one(hex(2)); return;
      case 'u': one(hex(4)); return;
      case 'b': case 'B': fail(std::string("unsupported word boundary '\\") + e + "'");
      case 'p': case 'P': fail(std::string("unsupported Unicode property '\\") + e + "'");
      default: break;
    }
    if (e >= '1' && e <= '9') fail(std::string("unsupported backreference '\\") + e + "'");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || e == '0')
      fail(std::string("unsupported escape '\\") + e + "'");
    one(static_cast<unsigned char>(e));  // escaped punctuation stands for itself
  }

  uint32_t hex(int digits) {
    const std::optional<uint32_t> v = read_hex(p_, pos_, digits);
    if (!v) fail("expected " + std::to_string(digits) + " hex digits");
    return *v;
  }

  uint32_t utf8_char() {
    const std::optional<uint32_t> cp = read_utf8_char(p_, pos_);
    if (!cp) fail("invalid UTF-8");
    return *cp;
  }
};

}  // namespace

std::string pattern_gbnf(std::string_view pattern, const std::string& path, const std::string& any_char) {
  return PatternParser(pattern, path, any_char).parse();
}

}  // namespace r1pi
