// Reading JSON that is still being generated: where a value ends once it is whole, whether the
// text so far can still open an object with one of some keys, and a string's characters decoded
// as they arrive. Each answer depends only on the text it is given, never on how it was cut, so
// a stream and the whole text read the same.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace r1pi {

inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end (one past) of the object or array that opens at text[start] ('{' or '['), counting
// brackets outside strings; npos while it is not closed yet. Its validity is the parser's business.
size_t json_value_end(std::string_view text, size_t start);

// text[start...] against `{ "key" :` for one of keys, whitespace allowed between the tokens.
struct ObjectStart {
  enum class State { Maybe, No, Yes } state;
  size_t at;        // No: the first character that cannot match; Yes: just past ':' and whitespace
  std::string key;  // Yes: the key
};
ObjectStart match_object_start(std::string_view text, size_t start, std::span<const std::string_view> keys);

// A JSON string's body (after its opening quote) decoded as far as the text allows: an escape cut
// at the end waits for the rest; an invalid escape is kept as written.
struct StringPrefix {
  std::string text;  // decoded UTF-8
  size_t used;       // characters read, the closing quote included
  bool closed;       // the closing quote was read
};
StringPrefix decode_json_string_prefix(std::string_view body);

}  // namespace r1pi
