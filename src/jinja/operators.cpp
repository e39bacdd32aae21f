// Python's arithmetic on template values: int stays int, bool counts as int, / gives a float,
// // and % floor toward minus infinity, str and list concatenate and repeat.
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

namespace {

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (op == "+" && a.is_string())
    fail("can only concatenate str (not \"" + type_name(b) + "\") to str");
  if (op == "+" && a.kind == Kind::List)
    fail("can only concatenate list (not \"" + type_name(b) + "\") to list");
  fail("unsupported operand type(s) for " + std::string(op) + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Value repeat(const Value& seq, int64_t n) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::string(std::move(out));
  }
  List out;
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return seq.kind == Kind::Tuple ? Value::make_tuple(std::move(out)) : Value::make_list(std::move(out));
}

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
  bool floats = a.kind == Kind::Float || b.kind == Kind::Float;
  if (op == "/") {
    if (b.as_double() == 0) fail("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (!floats) {
    int64_t x = a.as_int(), y = b.as_int();
    if (op == "+") return Value::integer(x + y);
    if (op == "-") return Value::integer(x - y);
    if (op == "*") return Value::integer(x * y);
    if (op == "//" || op == "%") {
      if (y == 0) fail(op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
      int64_t q = floor_div(x, y);
      return Value::integer(op == "//" ? q : x - q * y);
    }
    if (op == "**" && y >= 0) {
      int64_t r = 1;
      for (int64_t k = 0; k < y; ++k) r *= x;
      return Value::integer(r);
    }
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value::number(x + y);
  if (op == "-") return Value::number(x - y);
  if (op == "*") return Value::number(x * y);
  if (op == "**") return Value::number(std::pow(x, y));
  if (y == 0) fail("float division by zero");
  double q = std::floor(x / y);
  if (op == "//") return Value::number(q);
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value::number(m);
}

}  // namespace

Value binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value::string(to_str(a) + to_str(b));
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      // Markup + str escapes the str, and the sum is Markup (markupsafe).
      if (a.safe || b.safe)
        return Value::string((a.safe ? a.s : html_escape(a.s)) + (b.safe ? b.s : html_escape(b.s)), true);
      return Value::string(a.s + b.s);
    }
    if (a.kind == b.kind && a.is_sequence() && b.is_sequence()) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return a.kind == Kind::Tuple ? Value::make_tuple(std::move(out)) : Value::make_list(std::move(out));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_sequence()) && b.is_integral()) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_sequence()) && a.is_integral()) return repeat(b, a.as_int());
  }
  if (op == "%" && a.is_string()) fail("printf-style string formatting with % is not supported");
  unsupported(op, a, b);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Kind::Undefined: return false;  // jinja2's Undefined iterates as empty
    case Kind::String:
      if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + type_name(item));
      return container.s.find(item.s) != std::string::npos;
    case Kind::List:
    case Kind::Tuple:
      for (auto& e : *container.list)
        if (equal(e, item)) return true;
      return false;
    case Kind::Dict: return container.dict->find(item) != nullptr;
    default: fail("argument of type '" + type_name(container) + "' is not iterable");
  }
}

Value negate(const Value& v) {
  if (v.kind == Kind::Float) return Value::number(-v.f);
  if (v.is_integral()) return Value::integer(-v.as_int());
  if (v.is_undefined()) fail_undefined(v);
  fail("bad operand type for unary -: '" + type_name(v) + "'");
}

}  // namespace r1pi::jinja
