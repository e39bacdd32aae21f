// Python's text for values: str() (what {{ x }} prints), repr() (inside printed lists and dicts),
// float repr, json.dumps (tojson), and str's code-point view of UTF-8 text (len, slicing, strip).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ascii_lower.h"
#include "jinja/value.h"

namespace r1pi::jinja {

std::string to_str(const Value& v);  // str(v)
std::string repr(const Value& v);  // repr(v)
std::string float_repr(double d);  // repr(float): "1.0", "0.1", "1e+16", "inf"

struct JsonStyle {
  std::optional<std::string> indent;  // json.dumps's indent (a number of spaces, or the string)
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
// json.dumps(v, ensure_ascii=False, ...)
std::string dumps(const Value& v, const JsonStyle& style);

// The code points of UTF-8 text, and back.
std::u32string decode_utf8(std::string_view s);
std::string encode_utf8(std::u32string_view s);
bool is_ascii(std::string_view s);
bool is_space(char32_t c);  // str.isspace()

// str.strip/lstrip/rstrip: with no chars, whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) / str.rsplit: with no sep, runs of whitespace.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right);
std::string replace(std::string_view s, std::string_view old, std::string_view with, int64_t count);
std::string ascii_upper(std::string_view s);  // (ascii_lower: common/ascii_lower.h)
std::string str_title(std::string_view s);  // str.title()
std::string capitalize(std::string_view s);  // str.capitalize()
// markupsafe.escape: & < > " ' as entities.
std::string html_escape(std::string_view s);

}  // namespace r1pi::jinja
