// The expressions of a template, loosest binding first (parser_state.h has the parser).
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/parser_state.h"

namespace r1pi::jinja {

bool Parser::tuple_end(std::initializer_list<const char*> extra_ends) const {
  const Token& t = current();
  if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End || is_op(")"))
    return true;
  for (const char* name : extra_ends)
    if (is_name(name)) return true;
  return false;
}

// An expression, or several with commas: a tuple.
ExprPtr Parser::tuple(bool with_condition, std::initializer_list<const char*> extra_ends, bool parenthesized) {
  const Token& at = current();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (tuple_end(extra_ends)) break;
    items.push_back(expression(with_condition));
    if (is_op(",")) is_tuple = true;
    else break;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!parenthesized) fail_here("expected an expression, got '" + describe(current()) + "'");
  }
  auto e = make_expr(Expr::Type::TupleLiteral, at);
  e->items = std::move(items);
  return e;
}

ExprPtr Parser::expression(bool with_condition) { return with_condition ? conditional() : or_expr(); }

ExprPtr Parser::conditional() {
  ExprPtr e = or_expr();
  while (is_name("if")) {
    const Token& at = advance();
    auto c = make_expr(Expr::Type::Conditional, at);
    c->a = or_expr();
    c->b = std::move(e);
    if (skip_name("else")) c->c = conditional();
    e = std::move(c);
  }
  return e;
}

ExprPtr Parser::binary(Expr::Type type, const Token& at, ExprPtr a, ExprPtr b, std::string name) {
  auto e = make_expr(type, at);
  e->a = std::move(a);
  e->b = std::move(b);
  e->name = std::move(name);
  return e;
}

// `or` binds looser than `and`, `and` than `not`: each a left-associative chain of the next.
ExprPtr Parser::or_expr() { return keyword_chain("or", Expr::Type::Or, &Parser::and_expr); }

ExprPtr Parser::and_expr() { return keyword_chain("and", Expr::Type::And, &Parser::not_expr); }

ExprPtr Parser::keyword_chain(const char* keyword, Expr::Type type, ExprPtr (Parser::*operand)()) {
  ExprPtr e = (this->*operand)();
  while (is_name(keyword)) {
    const Token& at = advance();
    e = binary(type, at, std::move(e), (this->*operand)());
  }
  return e;
}

ExprPtr Parser::not_expr() {
  if (is_name("not")) {
    const Token& at = advance();
    auto e = make_expr(Expr::Type::Not, at);
    e->a = not_expr();
    return e;
  }
  return compare();
}

ExprPtr Parser::compare() {
  const Token& at = current();
  ExprPtr e = math1();
  std::vector<std::pair<std::string, ExprPtr>> ops;
  while (true) {
    const Token& t = current();
    if (t.type == TokenType::Operator &&
        (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
      advance();
      ops.emplace_back(t.text, math1());
    } else if (is_name("in")) {
      advance();
      ops.emplace_back("in", math1());
    } else if (is_name("not") && is_name("in", peek())) {
      advance();
      advance();
      ops.emplace_back("not in", math1());
    } else {
      break;
    }
  }
  if (ops.empty()) return e;
  auto c = make_expr(Expr::Type::Compare, at);
  c->a = std::move(e);
  c->comparisons = std::move(ops);
  return c;
}

ExprPtr Parser::math1() {
  ExprPtr e = concat();
  while (is_op("+") || is_op("-")) {
    const Token& at = advance();
    e = binary(Expr::Type::Binary, at, std::move(e), concat(), at.text);
  }
  return e;
}

ExprPtr Parser::concat() {
  ExprPtr e = math2();
  while (is_op("~")) {
    const Token& at = advance();
    e = binary(Expr::Type::Binary, at, std::move(e), math2(), "~");
  }
  return e;
}

ExprPtr Parser::math2() {
  ExprPtr e = power();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& at = advance();
    e = binary(Expr::Type::Binary, at, std::move(e), power(), at.text);
  }
  return e;
}

ExprPtr Parser::power() {
  ExprPtr e = unary(true);
  while (is_op("**")) {
    const Token& at = advance();
    e = binary(Expr::Type::Binary, at, std::move(e), unary(true), "**");
  }
  return e;
}

ExprPtr Parser::unary(bool with_filter) {
  const Token& at = current();
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    advance();
    e = make_expr(at.text == "-" ? Expr::Type::Negate : Expr::Type::Plus, at);
    e->a = unary(false);
  } else {
    e = primary();
  }
  e = postfix(std::move(e));
  if (with_filter) e = filter_chain(std::move(e));
  return e;
}

ExprPtr Parser::primary() {
  const Token& t = current();
  switch (t.type) {
    case TokenType::Name: {
      advance();
      auto e = make_expr(Expr::Type::Literal, t);
      if (t.text == "true" || t.text == "True") e->value = Value::boolean(true);
      else if (t.text == "false" || t.text == "False") e->value = Value::boolean(false);
      else if (t.text == "none" || t.text == "None") e->value = Value::none();
      else {
        e->type = Expr::Type::Name;
        e->name = t.text;
      }
      return e;
    }
    case TokenType::String: {
      std::string s;
      while (current().type == TokenType::String) s += advance().text;
      auto e = make_expr(Expr::Type::Literal, t);
      e->value = Value::string(std::move(s));
      return e;
    }
    case TokenType::Integer: {
      advance();
      auto e = make_expr(Expr::Type::Literal, t);
      try {
        e->value = Value::integer(std::stoll(t.text, nullptr, 10));
      } catch (const std::out_of_range&) {
        syntax_error(t.line, t.column, "integer " + t.text + " is out of range");
      }
      return e;
    }
    case TokenType::Float: {
      advance();
      auto e = make_expr(Expr::Type::Literal, t);
      e->value = Value::number(std::stod(t.text));
      return e;
    }
    default: break;
  }
  if (skip_op("(")) {
    ExprPtr e = tuple(true, {}, true);
    expect_op(")");
    return e;
  }
  if (skip_op("[")) {
    auto e = make_expr(Expr::Type::ListLiteral, t);
    while (!skip_op("]")) {
      if (!e->items.empty()) expect_op(",");
      if (skip_op("]")) break;
      e->items.push_back(expression(true));
    }
    return e;
  }
  if (skip_op("{")) {
    auto e = make_expr(Expr::Type::DictLiteral, t);
    while (!skip_op("}")) {
      if (!e->items.empty()) expect_op(",");
      if (skip_op("}")) break;
      e->items.push_back(expression(true));
      expect_op(":");
      e->items.push_back(expression(true));
    }
    return e;
  }
  fail_here("unexpected '" + describe(t) + "'");
}

ExprPtr Parser::postfix(ExprPtr e) {
  while (true) {
    if (is_op(".") || is_op("[")) e = subscript(std::move(e));
    else if (is_op("(")) e = call(std::move(e));
    else return e;
  }
}

ExprPtr Parser::subscript(ExprPtr object) {
  const Token& at = advance();
  if (at.text == ".") {
    const Token& t = current();
    if (t.type == TokenType::Name) {
      advance();
      auto e = make_expr(Expr::Type::Attribute, at);
      e->a = std::move(object);
      e->name = t.text;
      return e;
    }
    if (t.type != TokenType::Integer) fail_here("expected name or number after '.'");
    auto e = make_expr(Expr::Type::Subscript, at);
    e->a = std::move(object);
    e->b = primary();
    return e;
  }
  ExprPtr index = subscribed();
  expect_op("]");
  if (index->type == Expr::Type::Slice) {
    index->a = std::move(object);
    return index;
  }
  auto e = make_expr(Expr::Type::Subscript, at);
  e->a = std::move(object);
  e->b = std::move(index);
  return e;
}

// An index, or a slice start:stop:step (each may be missing).
ExprPtr Parser::subscribed() {
  const Token& at = current();
  ExprPtr start;
  if (!is_op(":")) {
    start = expression(true);
    if (!is_op(":")) return start;
  }
  advance();
  auto s = make_expr(Expr::Type::Slice, at);
  s->items.push_back(std::move(start));
  s->items.push_back(is_op(":") || is_op("]") ? nullptr : expression(true));
  if (skip_op(":")) s->items.push_back(is_op("]") ? nullptr : expression(true));
  else s->items.push_back(nullptr);
  return s;
}

void Parser::call_arguments(Expr& e) {
  expect_op("(");
  bool first = true;
  while (!skip_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (skip_op(")")) break;
    if (is_op("*") || is_op("**")) fail_here("*args and **kwargs in calls are not supported");
    if (current().type == TokenType::Name && is_op("=", peek())) {
      std::string name = advance().text;
      advance();
      e.keywords.emplace_back(std::move(name), expression(true));
    } else {
      if (!e.keywords.empty()) fail_here("positional argument after keyword argument");
      e.items.push_back(expression(true));
    }
  }
}

ExprPtr Parser::call(ExprPtr callee) {
  auto e = make_expr(Expr::Type::Call, current());
  e->a = std::move(callee);
  call_arguments(*e);
  return e;
}

std::string Parser::dotted_name() {
  std::string name = expect_name();
  while (is_op(".") && peek().type == TokenType::Name) {
    advance();
    name += "." + advance().text;
  }
  return name;
}

// `| filter(args)`, `is [not] test args` and calls after them, applied to e (null: a filter
// block's chain, applied to its body, whose first filter has no "|").
ExprPtr Parser::filter_chain(ExprPtr e, bool inline_start) {
  while (true) {
    if (is_op("|") || inline_start) {
      const Token& at = inline_start ? current() : advance();
      inline_start = false;
      auto f = make_expr(Expr::Type::Filter, at);
      f->a = std::move(e);
      f->name = dotted_name();
      if (!filter_exists(f->name)) syntax_error(at.line, at.column, "no filter named '" + f->name + "'");
      if (is_op("(")) call_arguments(*f);
      e = std::move(f);
    } else if (e && is_name("is")) {
      const Token& at = advance();
      auto t = make_expr(Expr::Type::Test, at);
      t->a = std::move(e);
      t->negated = skip_name("not");
      t->name = dotted_name();
      if (!test_exists(t->name)) syntax_error(at.line, at.column, "no test named '" + t->name + "'");
      const Token& next = current();
      bool argument_starts = next.type == TokenType::Name || next.type == TokenType::String ||
                             next.type == TokenType::Integer || next.type == TokenType::Float || is_op("[") ||
                             is_op("{");
      if (is_op("(")) {
        call_arguments(*t);
      } else if (argument_starts && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) fail_here("you cannot chain multiple tests with 'is'");
        t->items.push_back(postfix(primary()));
      }
      e = std::move(t);
    } else if (e && is_op("(")) {
      e = call(std::move(e));
    } else {
      return e;
    }
  }
}

}  // namespace r1pi::jinja
