// llama.cpp's GBNF grammar syntax (grammars/README.md in llama.cpp):
//   name ::= alternatives        one rule per line (inside parentheses and after | or ::= a rule
//                                may go on over newlines); names: letters, digits, '-' and '_'
//   a b                          sequence;  a | b  alternatives;  ( ... ) grouping
//   x*  x+  x?  x{m}  x{m,}  x{m,n}   repetition of the item just before
//   "text"                       literal, escapes \n \t \r \\ \" \[ \] \- \^ \/ \xHH \uHHHH \UHHHHHHHH
//   [a-z_]  [^"\\]               character class and its negation (same escapes);  . any character
//   # ...                        comment to the end of the line
// The rule named root is the start. Errors are r1pi::Error "grammar: line L, column C: <what>"
// (an undefined rule names the place of its first use) and "grammar: no rule named 'root'".
#pragma once
#include <memory>
#include <string_view>

#include "grammar/grammar.h"

namespace r1pi {

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text);

}  // namespace r1pi
