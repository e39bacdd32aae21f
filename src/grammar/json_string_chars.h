// The characters of a JSON string's content as GBNF: a set of code points spelt as JSON writes
// them inside quotes (plain, or escaped: \" \\ \b \f \n \r \t, \u00XX for other controls).
#pragma once
#include <string>

#include "grammar/char_set.h"

namespace r1pi {

// A GBNF expression matching one JSON spelling of each code point in the set; "" when the set
// is empty.
std::string json_string_chars(const CharSet& set);

}  // namespace r1pi
