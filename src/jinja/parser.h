// Tokens to the statement tree, with jinja2's grammar and operator precedence.
#pragma once
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace r1pi::jinja {

// A Root node; throws Error "template syntax error at line L, column C: ...".
NodePtr parse(const std::vector<Token>& tokens);

}  // namespace r1pi::jinja
