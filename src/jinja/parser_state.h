// The Jinja parser's state and its productions (jinja/parser.h is its interface): the token
// stream's helpers here, the statements in parser.cpp, the expressions in parser_expressions.cpp.
// Recursive descent with jinja2's grammar and operator precedence.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"
#include "jinja/syntax_error.h"

namespace r1pi::jinja {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  NodePtr root();

 private:
  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(size_t ahead = 1) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  [[noreturn]] void fail_here(const std::string& message) const {
    syntax_error(current().line, current().column, message);
  }
  bool is_op(const char* op, const Token& t) const { return t.type == TokenType::Operator && t.text == op; }
  bool is_op(const char* op) const { return is_op(op, current()); }
  bool is_name(const char* name, const Token& t) const { return t.type == TokenType::Name && t.text == name; }
  bool is_name(const char* name) const { return is_name(name, current()); }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail_here(std::string("expected '") + op + "', got '" + describe(current()) + "'");
  }
  std::string expect_name() {
    if (current().type != TokenType::Name) fail_here("expected a name, got '" + describe(current()) + "'");
    return advance().text;
  }
  void expect_block_end() {
    if (current().type != TokenType::BlockEnd) fail_here("expected end of statement block, got '" + describe(current()) + "'");
    advance();
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::End: return "end of template";
      case TokenType::BlockEnd: return "end of statement block";
      case TokenType::VariableEnd: return "end of print statement";
      default: return t.text;
    }
  }
  // An expression or node of this type, placed at the token (for error messages).
  template <class T>
  static std::unique_ptr<T> located(decltype(T::type) type, const Token& at) {
    auto made = std::make_unique<T>();
    made->type = type;
    made->line = at.line;
    made->column = at.column;
    return made;
  }
  static ExprPtr make_expr(Expr::Type type, const Token& at) { return located<Expr>(type, at); }
  static NodePtr make_node(Node::Type type, const Token& at) { return located<Node>(type, at); }

  // ---- statements (parser.cpp)
  Body body(std::initializer_list<const char*> ends);
  NodePtr statement();
  NodePtr if_statement(const Token& at);
  NodePtr for_statement(const Token& at);
  NodePtr set_statement(const Token& at);
  NodePtr macro_statement(const Token& at);
  NodePtr filter_statement(const Token& at);
  Target assign_target(bool with_namespace);

  // ---- expressions (parser_expressions.cpp)
  bool tuple_end(std::initializer_list<const char*> extra_ends) const;
  ExprPtr tuple(bool with_condition, std::initializer_list<const char*> extra_ends, bool parenthesized = false);
  ExprPtr expression(bool with_condition);
  ExprPtr conditional();
  ExprPtr binary(Expr::Type type, const Token& at, ExprPtr a, ExprPtr b, std::string name = {});
  ExprPtr or_expr();
  ExprPtr and_expr();
  ExprPtr keyword_chain(const char* keyword, Expr::Type type, ExprPtr (Parser::*operand)());
  ExprPtr not_expr();
  ExprPtr compare();
  ExprPtr math1();
  ExprPtr concat();
  ExprPtr math2();
  ExprPtr power();
  ExprPtr unary(bool with_filter);
  ExprPtr primary();
  ExprPtr postfix(ExprPtr e);
  ExprPtr subscript(ExprPtr object);
  ExprPtr subscribed();
  void call_arguments(Expr& e);
  ExprPtr call(ExprPtr callee);
  std::string dotted_name();
  ExprPtr filter_chain(ExprPtr e, bool inline_start = false);

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
};

}  // namespace r1pi::jinja
