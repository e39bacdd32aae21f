#include "jinja/parser.h"

#include <initializer_list>

#include "jinja/builtins.h"
#include "jinja/syntax_error.h"

namespace r1pi::jinja {

namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  NodePtr root() {
    auto node = make_node(Node::Type::Root, current());
    node->body = body({});
    if (current().type != TokenType::End) fail_here("unexpected '" + current().text + "'");
    return node;
  }

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

  static ExprPtr make_expr(Expr::Type type, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->type = type;
    e->line = at.line;
    e->column = at.column;
    return e;
  }
  static NodePtr make_node(Node::Type type, const Token& at) {
    auto n = std::make_unique<Node>();
    n->type = type;
    n->line = at.line;
    n->column = at.column;
    return n;
  }

  // ---- statements

  // Nodes up to a block tag whose keyword is one of `ends` (left as the current token) or the end.
  Body body(std::initializer_list<const char*> ends) {
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

  NodePtr statement() {
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

  NodePtr if_statement(const Token& at) {
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

  NodePtr for_statement(const Token& at) {
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

  NodePtr set_statement(const Token& at) {
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

  NodePtr macro_statement(const Token& at) {
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

  NodePtr filter_statement(const Token& at) {
    auto n = make_node(Node::Type::FilterBlock, at);
    n->filter = filter_chain(nullptr, true);
    expect_block_end();
    n->body = body({"endfilter"});
    advance();
    expect_block_end();
    return n;
  }

  Target assign_target(bool with_namespace) {
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

  // ---- expressions

  bool tuple_end(std::initializer_list<const char*> extra_ends) const {
    const Token& t = current();
    if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End || is_op(")"))
      return true;
    for (const char* name : extra_ends)
      if (is_name(name)) return true;
    return false;
  }

  // An expression, or several with commas: a tuple.
  ExprPtr tuple(bool with_condition, std::initializer_list<const char*> extra_ends, bool parenthesized = false) {
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

  ExprPtr expression(bool with_condition) { return with_condition ? conditional() : or_expr(); }

  ExprPtr conditional() {
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

  ExprPtr binary(Expr::Type type, const Token& at, ExprPtr a, ExprPtr b, std::string name = {}) {
    auto e = make_expr(type, at);
    e->a = std::move(a);
    e->b = std::move(b);
    e->name = std::move(name);
    return e;
  }

  // `or` binds looser than `and`, `and` than `not`: each a left-associative chain of the next.
  ExprPtr or_expr() { return keyword_chain("or", Expr::Type::Or, &Parser::and_expr); }
  ExprPtr and_expr() { return keyword_chain("and", Expr::Type::And, &Parser::not_expr); }
  ExprPtr keyword_chain(const char* keyword, Expr::Type type, ExprPtr (Parser::*operand)()) {
    ExprPtr e = (this->*operand)();
    while (is_name(keyword)) {
      const Token& at = advance();
      e = binary(type, at, std::move(e), (this->*operand)());
    }
    return e;
  }

  ExprPtr not_expr() {
    if (is_name("not")) {
      const Token& at = advance();
      auto e = make_expr(Expr::Type::Not, at);
      e->a = not_expr();
      return e;
    }
    return compare();
  }

  ExprPtr compare() {
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

  ExprPtr math1() {
    ExprPtr e = concat();
    while (is_op("+") || is_op("-")) {
      const Token& at = advance();
      e = binary(Expr::Type::Binary, at, std::move(e), concat(), at.text);
    }
    return e;
  }

  ExprPtr concat() {
    ExprPtr e = math2();
    while (is_op("~")) {
      const Token& at = advance();
      e = binary(Expr::Type::Binary, at, std::move(e), math2(), "~");
    }
    return e;
  }

  ExprPtr math2() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = advance();
      e = binary(Expr::Type::Binary, at, std::move(e), power(), at.text);
    }
    return e;
  }

  ExprPtr power() {
    ExprPtr e = unary(true);
    while (is_op("**")) {
      const Token& at = advance();
      e = binary(Expr::Type::Binary, at, std::move(e), unary(true), "**");
    }
    return e;
  }

  ExprPtr unary(bool with_filter) {
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

  ExprPtr primary() {
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

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (is_op(".") || is_op("[")) e = subscript(std::move(e));
      else if (is_op("(")) e = call(std::move(e));
      else return e;
    }
  }

  ExprPtr subscript(ExprPtr object) {
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
  ExprPtr subscribed() {
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

  void call_arguments(Expr& e) {
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

  ExprPtr call(ExprPtr callee) {
    auto e = make_expr(Expr::Type::Call, current());
    e->a = std::move(callee);
    call_arguments(*e);
    return e;
  }

  std::string dotted_name() {
    std::string name = expect_name();
    while (is_op(".") && peek().type == TokenType::Name) {
      advance();
      name += "." + advance().text;
    }
    return name;
  }

  // `| filter(args)`, `is [not] test args` and calls after them, applied to e (null: a filter
  // block's chain, applied to its body, whose first filter has no "|").
  ExprPtr filter_chain(ExprPtr e, bool inline_start = false) {
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

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

NodePtr parse(const std::vector<Token>& tokens) { return Parser(tokens).root(); }

}  // namespace r1pi::jinja
