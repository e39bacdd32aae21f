// Writing GBNF text: literals and character classes with the escapes gbnf_parser.h reads. Used by
// to_gbnf and by the JSON Schema converter, which emits GBNF and parses it.
#pragma once
#include <string>
#include <string_view>

#include "grammar/char_set.h"

namespace r1pi {

// "..." matching exactly these UTF-8 bytes (which must be valid UTF-8).
std::string gbnf_literal(std::string_view utf8);
// [...] matching the set ("." for every character).
std::string gbnf_class(const CharSet& set);

}  // namespace r1pi
