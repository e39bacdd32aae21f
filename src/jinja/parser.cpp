// The statements of a template (parser_state.h has the parser; the expressions are
// parser_expressions.cpp's).
#include "jinja/parser.h"

#include <initializer_list>

#include "jinja/parser_state.h"

namespace r1pi::jinja {

NodePtr parse(const std::vector<Token>& tokens) { return Parser(tokens).root(); }

NodePtr Parser::root() {
  auto node = make_node(Node::Type::Root, current());
  node->body = body({});
  if (current().type != TokenType::End) fail_here("unexpected '" + current().text + "'");
  return node;
}

// Nodes up to a block tag whose keyword is one of `ends` (left as the current token) or the end.
Body Parser::body(std::initializer_list<const char*> ends) {
  Body nodes;
  while (true) {
    const Token& t = current();
    if (t.type == TokenType::End) {
      if (ends.size()) fail_here(std::string("unexpected end of template, expected '") + *ends.begin() + "'");
      return nodes;
    }
    if (t.type == TokenType::Text) {
      auto n = make_node(Node::Type::Text, t);
      n->text = t.text;
      nodes.push_back(std::move(n));
      advance();
    } else if (t.type == TokenType::VariableBegin) {
      advance();
      auto n = make_node(Node::Type::Output, t);
      n->expr = tuple(true, {});
      if (current().type != TokenType::VariableEnd) fail_here("expected end of print statement, got '" + describe(current()) + "'");
      advance();
      nodes.push_back(std::move(n));
    } else if (t.type == TokenType::BlockBegin) {
      const Token& keyword = peek();
      for (const char* end : ends)
        if (is_name(end, keyword)) {
          advance();
          return nodes;
        }
      advance();
      nodes.push_back(statement());
    } else {
      fail_here("unexpected '" + t.text + "'");
    }
  }
}

NodePtr Parser::statement() {
  const Token& t = current();
  if (t.type != TokenType::Name) fail_here("expected a statement name, got '" + describe(t) + "'");
  const std::string& k = t.text;
  advance();
  if (k == "if") return if_statement(t);
  if (k == "for") return for_statement(t);
  if (k == "set") return set_statement(t);
  if (k == "macro") return macro_statement(t);
  if (k == "filter") return filter_statement(t);
  if (k == "generation") {
    auto n = make_node(Node::Type::Scope, t);
    expect_block_end();
    n->body = body({"endgeneration"});
    advance();
    expect_block_end();
    return n;
  }
  if (k == "break" || k == "continue") {
    if (loop_depth_ == 0) syntax_error(t.line, t.column, "'" + k + "' outside of a loop");
    auto n = make_node(k == "break" ? Node::Type::Break : Node::Type::Continue, t);
    expect_block_end();
    return n;
  }
  syntax_error(t.line, t.column, "unknown or unsupported tag '" + k + "'");
}

NodePtr Parser::if_statement(const Token& at) {
  auto n = make_node(Node::Type::If, at);
  while (true) {
    ExprPtr condition = tuple(false, {});
    expect_block_end();
    Body b = body({"elif", "else", "endif"});
    n->branches.emplace_back(std::move(condition), std::move(b));
    std::string keyword = advance().text;
    if (keyword == "elif") continue;
    if (keyword == "else") {
      expect_block_end();
      n->else_body = body({"endif"});
      advance();
    }
    expect_block_end();
    return n;
  }
}

NodePtr Parser::for_statement(const Token& at) {
  auto n = make_node(Node::Type::For, at);
  n->target = assign_target(false);
  if (!skip_name("in")) fail_here("expected 'in', got '" + describe(current()) + "'");
  n->expr = tuple(false, {"recursive"});
  if (is_name("recursive")) fail_here("recursive loops are not supported");
  if (skip_name("if")) n->condition = expression(true);
  expect_block_end();
  ++loop_depth_;
  n->body = body({"endfor", "else"});
  --loop_depth_;
  if (advance().text == "else") {
    expect_block_end();
    n->else_body = body({"endfor"});
    advance();
  }
  expect_block_end();
  return n;
}

NodePtr Parser::set_statement(const Token& at) {
  auto n = make_node(Node::Type::Set, at);
  n->target = assign_target(true);
  if (skip_op("=")) {
    n->expr = tuple(true, {});
    expect_block_end();
    return n;
  }
  n->type = Node::Type::SetBlock;
  if (is_op("|")) n->filter = filter_chain(nullptr);
  expect_block_end();
  int saved = loop_depth_;
  loop_depth_ = 0;
  n->body = body({"endset"});
  loop_depth_ = saved;
  advance();
  expect_block_end();
  return n;
}

NodePtr Parser::macro_statement(const Token& at) {
  auto n = make_node(Node::Type::Macro, at);
  n->text = expect_name();
  expect_op("(");
  while (!skip_op(")")) {
    if (!n->params.empty()) expect_op(",");
    if (skip_op(")")) break;
    std::string name = expect_name();
    ExprPtr default_value;
    if (skip_op("=")) default_value = expression(true);
    else if (!n->params.empty() && n->params.back().second)
      fail_here("non-default argument follows default argument");
    n->params.emplace_back(std::move(name), std::move(default_value));
  }
  expect_block_end();
  int saved = loop_depth_;
  loop_depth_ = 0;
  n->body = body({"endmacro"});
  loop_depth_ = saved;
  advance();
  expect_block_end();
  return n;
}

NodePtr Parser::filter_statement(const Token& at) {
  auto n = make_node(Node::Type::FilterBlock, at);
  n->filter = filter_chain(nullptr, true);
  expect_block_end();
  n->body = body({"endfilter"});
  advance();
  expect_block_end();
  return n;
}

Target Parser::assign_target(bool with_namespace) {
  Target target;
  if (with_namespace && current().type == TokenType::Name && is_op(".", peek())) {
    target.names.push_back(advance().text);
    advance();
    target.attribute = expect_name();
    return target;
  }
  bool parenthesized = skip_op("(");
  target.names.push_back(expect_name());
  while (skip_op(",")) {
    if (current().type != TokenType::Name) break;
    target.names.push_back(expect_name());
  }
  if (parenthesized) expect_op(")");
  for (const auto& name : target.names)
    if (name == "true" || name == "false" || name == "none" || name == "True" || name == "False" || name == "None")
      fail_here("can't assign to '" + name + "'");
  return target;
}

}  // namespace r1pi::jinja
