// Template source to tokens, with jinja2's whitespace rules as transformers sets them:
// trim_blocks (the newline after a block or comment tag goes), lstrip_blocks (the spaces and tabs
// before a block or comment tag on its own line go), "-" and "+" on tags, a single trailing
// newline of the source dropped, \r\n and \r read as \n, {% raw %} kept as text.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace r1pi::jinja {

enum class TokenType { Text, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, End };

struct Token {
  TokenType type;
  std::string text;  // Text: the data; String: the decoded literal; else the token as written
  int line;
  int column;
};

std::vector<Token> tokenize(std::string_view source);

}  // namespace r1pi::jinja
