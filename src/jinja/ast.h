// The parsed template: expressions and statements, each with where it stands in the source.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace r1pi::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Type {
    Literal,  // value
    Name,  // name
    ListLiteral,  // items
    TupleLiteral,  // items
    DictLiteral,  // items: key, value, key, value, ...
    Attribute,  // a.name
    Subscript,  // a[b]
    Slice,  // a[items[0]:items[1]:items[2]], each may be null
    Call,  // a(items, keywords)
    Filter,  // a | name(items, keywords); a is null in a filter block's chain
    Test,  // a is [not] name(items, keywords)
    Negate,  // -a
    Plus,  // +a
    Not,  // not a
    And,  // a and b
    Or,  // a or b
    Binary,  // a name b: + - * / // % ** ~
    Compare,  // a then comparisons (op, operand) ...
    Conditional,  // b if a else c (c may be null)
  };
  Type type;
  int line = 0;
  int column = 0;
  Value value;
  std::string name;
  bool negated = false;
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<std::pair<std::string, ExprPtr>> comparisons;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

// An assignment target: a name, a namespace attribute (name.attribute), or a tuple of names.
struct Target {
  std::vector<std::string> names;  // more than one: unpack
  std::string attribute;  // set on names[0]'s namespace
};

struct Node {
  enum class Type {
    Root,  // body
    Text,  // text
    Output,  // {{ expr }}
    If,  // branches (condition, body); else_body
    For,  // target in expr [if condition]: body; else_body
    Set,  // target = expr
    SetBlock,  // target = rendered body, through filter (may be null)
    Macro,  // name(params): body
    FilterBlock,  // body through filter
    Scope,  // body rendered as is ({% generation %})
    Break,
    Continue,
  };
  Type type;
  int line = 0;
  int column = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  ExprPtr filter;
  Target target;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters and their defaults
  Body body;
  Body else_body;
};

}  // namespace r1pi::jinja
