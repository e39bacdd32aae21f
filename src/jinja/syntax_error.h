// The one way the lexer and the parser report a template that does not parse.
#pragma once
#include <string>

#include "jinja/jinja.h"

namespace r1pi::jinja {

[[noreturn]] inline void syntax_error(int line, int column, const std::string& message) {
  throw Error("template syntax error at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
              message);
}

}  // namespace r1pi::jinja
