#include "jinja/lexer.h"

#include <algorithm>
#include <cstring>

#include "jinja/python_text.h"
#include "jinja/syntax_error.h"

namespace r1pi::jinja {

namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || digit(c); }

// jinja2 reads the source with its newlines as \n and without one trailing newline.
std::string normalize(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t k = 0; k < source.size(); ++k) {
    if (source[k] == '\r') {
      out += '\n';
      if (k + 1 < source.size() && source[k + 1] == '\n') ++k;
    } else {
      out += source[k];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(normalize(source)) {
    for (size_t k = 0; k < src_.size(); ++k)
      if (src_[k] == '\n') line_starts_.push_back(k + 1);
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t start = next_tag(pos_);
      if (start == std::string::npos) {
        emit(TokenType::Text, src_.substr(pos_), pos_);
        break;
      }
      char kind = src_[start + 1];
      size_t after = start + 2;
      char sign = after < src_.size() && (src_[after] == '-' || src_[after] == '+') ? src_[after++] : 0;
      size_t raw_end = kind == '%' ? raw_begin_end(after) : std::string::npos;
      std::string text = src_.substr(pos_, start - pos_);
      strip_before_tag(text, sign, kind != '{');
      if (!text.empty()) emit(TokenType::Text, std::move(text), pos_);
      if (kind == '#') {
        comment(start, after);
      } else if (raw_end != std::string::npos) {
        raw(start, raw_end);
      } else {
        tag(start, after, kind == '{');
      }
    }
    tokens_.push_back({TokenType::End, "", position(src_.size()).first, position(src_.size()).second});
    return std::move(tokens_);
  }

 private:
  std::pair<int, int> position(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return {int(it - line_starts_.begin()), int(offset - *(it - 1)) + 1};
  }

  void emit(TokenType type, std::string text, size_t offset) {
    auto [line, column] = position(offset);
    tokens_.push_back({type, std::move(text), line, column});
  }

  size_t next_tag(size_t from) const {
    for (size_t k = src_.find('{', from); k != std::string::npos; k = src_.find('{', k + 1))
      if (k + 1 < src_.size() && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
    return std::string::npos;
  }

  size_t skip_space(size_t k) const {
    while (k < src_.size() && space(src_[k])) ++k;
    return k;
  }

  bool at(size_t k, const char* s) const { return src_.compare(k, std::strlen(s), s) == 0; }

  // "-" strips all whitespace before a tag; lstrip_blocks strips the spaces before a block or
  // comment tag when only they stand between the line's start and the tag.
  void strip_before_tag(std::string& text, char sign, bool lstrip_applies) const {
    if (sign == '-') {
      size_t end = text.size();
      while (end > 0 && space(text[end - 1])) --end;
      text.resize(end);
    } else if (sign != '+' && lstrip_applies) {
      size_t line_start = text.rfind('\n');
      line_start = line_start == std::string::npos ? 0 : line_start + 1;
      if ((line_start > 0 || line_starting_) && line_start < text.size() &&
          std::all_of(text.begin() + long(line_start), text.end(), space))
        text.resize(line_start);
    }
  }

  // After a tag's end marker: "-" eats the whitespace that follows, trim_blocks one newline
  // (block and comment tags only), "+" nothing.
  void end_tag(size_t end, char sign, bool trims) {
    size_t k = end;
    if (sign == '-')
      k = skip_space(k);
    else if (sign != '+' && trims && k < src_.size() && src_[k] == '\n')
      ++k;
    line_starting_ = k > 0 && src_[k - 1] == '\n';
    pos_ = k;
  }

  // Where "{% raw %}" ends when the block tag at `after` is one, else npos.
  size_t raw_begin_end(size_t after) const {
    size_t k = skip_space(after);
    if (!at(k, "raw")) return std::string::npos;
    k = skip_space(k + 3);
    if (at(k, "-%}")) return k + 3;
    if (at(k, "%}")) return k + 2;
    return std::string::npos;
  }

  void comment(size_t start, size_t after) {
    size_t close = src_.find("#}", after);
    if (close == std::string::npos) {
      auto [line, column] = position(start);
      syntax_error(line, column, "missing end of comment tag");
    }
    char sign = close > after && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
    end_tag(close + 2, sign, true);
  }

  void raw(size_t start, size_t content) {
    bool dash_begin = src_[content - 3] == '-';
    if (dash_begin) content = skip_space(content);
    line_starting_ = content > 0 && src_[content - 1] == '\n';
    for (size_t k = src_.find("{%", content); k != std::string::npos; k = src_.find("{%", k + 1)) {
      size_t q = k + 2;
      char sign = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q++] : 0;
      q = skip_space(q);
      if (!at(q, "endraw")) continue;
      q = skip_space(q + 6);
      char end_sign = 0;
      if (at(q, "-%}") || at(q, "+%}")) {
        end_sign = src_[q];
        q += 3;
      } else if (at(q, "%}")) {
        q += 2;
      } else {
        continue;
      }
      std::string text = src_.substr(content, k - content);
      strip_before_tag(text, sign, true);
      if (!text.empty()) emit(TokenType::Text, std::move(text), content);
      end_tag(q, end_sign, true);
      return;
    }
    auto [line, column] = position(start);
    syntax_error(line, column, "missing end of raw directive");
  }

  void tag(size_t start, size_t after, bool variable) {
    emit(variable ? TokenType::VariableBegin : TokenType::BlockBegin, src_.substr(start, after - start), start);
    const char* close = variable ? "}}" : "%}";
    int depth = 0;
    size_t k = after;
    while (true) {
      k = skip_space(k);
      if (k >= src_.size()) {
        auto [line, column] = position(start);
        syntax_error(line, column, std::string("unexpected end of template, expected '") + close + "'");
      }
      if (depth == 0) {
        char sign = src_[k] == '-' || (src_[k] == '+' && !variable) ? src_[k] : 0;
        if (at(k + (sign ? 1 : 0), close)) {
          emit(variable ? TokenType::VariableEnd : TokenType::BlockEnd, close, k);
          end_tag(k + (sign ? 3 : 2), sign, !variable);
          return;
        }
      }
      char c = src_[k];
      size_t begin = k;
      if (digit(c)) {
        k = number(k);
        continue;
      }
      if (name_start(c)) {
        while (k < src_.size() && name_char(src_[k])) ++k;
        emit(TokenType::Name, src_.substr(begin, k - begin), begin);
        continue;
      }
      if (c == '\'' || c == '"') {
        k = string_literal(k);
        continue;
      }
      static const char* const two_char[] = {"//", "**", "==", "!=", "<=", ">="};
      size_t len = 0;
      for (const char* op : two_char)
        if (at(k, op)) len = 2;
      if (!len && std::strchr("+-/*%~[](){}<>=.:|,;", c)) len = 1;
      if (!len) {
        auto [line, column] = position(k);
        syntax_error(line, column, std::string("unexpected char '") + c + "'");
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      emit(TokenType::Operator, src_.substr(k, len), k);
      k += len;
    }
  }

  size_t digits(size_t k) const {
    while (k < src_.size() && (digit(src_[k]) || (src_[k] == '_' && k + 1 < src_.size() && digit(src_[k + 1])))) ++k;
    return k;
  }

  size_t number(size_t begin) {
    size_t k = digits(begin);
    bool is_float = false;
    bool after_dot = begin > 0 && src_[begin - 1] == '.';  // x.0.1 is attribute 0, then 1
    if (!after_dot && k + 1 < src_.size() && src_[k] == '.' && digit(src_[k + 1])) {
      k = digits(k + 1);
      is_float = true;
    }
    if (!after_dot && k < src_.size() && (src_[k] == 'e' || src_[k] == 'E')) {
      size_t e = k + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && digit(src_[e])) {
        k = digits(e);
        is_float = true;
      }
    }
    std::string text = src_.substr(begin, k - begin);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    emit(is_float ? TokenType::Float : TokenType::Integer, std::move(text), begin);
    return k;
  }

  // Python's string escapes, as jinja2 decodes a literal ("unicode-escape").
  size_t string_literal(size_t begin) {
    char quote = src_[begin];
    std::string out;
    size_t k = begin + 1;
    auto hex = [&](size_t at_, int n) -> long {
      if (at_ + size_t(n) > src_.size()) return -1;
      long v = 0;
      for (int d = 0; d < n; ++d) {
        char h = src_[at_ + size_t(d)];
        int x = digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
        if (x < 0) return -1;
        v = v * 16 + x;
      }
      return v;
    };
    while (true) {
      if (k >= src_.size()) {
        auto [line, column] = position(begin);
        syntax_error(line, column, "unterminated string");
      }
      char c = src_[k];
      if (c == quote) break;
      if (c != '\\' || k + 1 >= src_.size()) {
        out += c;
        ++k;
        continue;
      }
      char e = src_[k + 1];
      k += 2;
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'a': out += '\a'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          long v = hex(k, n);
          if (v < 0 || v > 0x10ffff) {
            auto [line, column] = position(k - 2);
            syntax_error(line, column, std::string("truncated \\") + e + " escape");
          }
          out += encode_utf8(std::u32string(1, char32_t(v)));
          k += size_t(n);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int d = 0; d < 2 && k < src_.size() && src_[k] >= '0' && src_[k] <= '7'; ++d) v = v * 8 + (src_[k++] - '0');
            out += encode_utf8(std::u32string(1, char32_t(v)));
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    emit(TokenType::String, std::move(out), begin);
    return k + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_{0};
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace r1pi::jinja
