// JSON Schema's "pattern" (an ECMA-262 regular expression, searched anywhere in the string) as
// GBNF over a JSON string's content. The subset: literal characters, escapes (\d \D \w \W \s \S,
// \t \n \r \f \v, \xHH, \uHHHH, escaped punctuation), classes [a-z] [^...], ".", groups (...) and
// (?:...), alternation |, quantifiers * + ? {m} {m,} {m,n} (lazy forms too, same language), and
// ^ / $ at the start / end of a top-level alternative (without them that side is free: any
// characters may come before or after). Refused by name: lookaround, named groups, backreferences,
// word boundaries, Unicode properties, possessive quantifiers, anchors elsewhere.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

// any_char: the GBNF name of one JSON string character (what a free side repeats). Throws
// r1pi::Error "json_schema: pattern at <path>: <what>".
std::string pattern_gbnf(std::string_view pattern, const std::string& path, const std::string& any_char);

}  // namespace r1pi
