// jinja2's tests (`x is defined`, `x is string`, ...), with Python's notion of each type: a bool
// is a number, a str and a dict are sequences, an undefined value is iterable.
#include <algorithm>

#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

namespace {

using Test = Named<bool (*)(const Value& v, CallArgs& args)>;

const Value& one_argument(const char* name, CallArgs& args) {
  if (args.positional.size() != 1 || !args.keyword.empty())
    fail(std::string("test '") + name + "' takes one argument");
  return args.positional[0];
}

bool no_arguments(const char* name, CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty())
    fail(std::string("test '") + name + "' takes no arguments");
  return true;
}

bool is_eq(const Value& v, CallArgs& a) { return equal(v, one_argument("eq", a)); }
bool is_ne(const Value& v, CallArgs& a) { return !equal(v, one_argument("ne", a)); }
bool is_lt(const Value& v, CallArgs& a) { return less(v, one_argument("lt", a)); }
bool is_le(const Value& v, CallArgs& a) { const Value& o = one_argument("le", a); return !less(o, v); }
bool is_gt(const Value& v, CallArgs& a) { return less(one_argument("gt", a), v); }
bool is_ge(const Value& v, CallArgs& a) { return !less(v, one_argument("ge", a)); }

bool integer_value(const Value& v) { return v.kind == Kind::Int; }

const Test kTests[] = {
    {"defined", [](const Value& v, CallArgs& a) { return no_arguments("defined", a) && !v.is_undefined(); }},
    {"undefined", [](const Value& v, CallArgs& a) { return no_arguments("undefined", a) && v.is_undefined(); }},
    {"none", [](const Value& v, CallArgs& a) { return no_arguments("none", a) && v.is_none(); }},
    {"string", [](const Value& v, CallArgs& a) { return no_arguments("string", a) && v.is_string(); }},
    {"mapping", [](const Value& v, CallArgs& a) { return no_arguments("mapping", a) && v.kind == Kind::Dict; }},
    {"iterable",
     [](const Value& v, CallArgs& a) {
       return no_arguments("iterable", a) && (v.is_undefined() || v.is_string() || v.kind == Kind::List ||
                                              v.kind == Kind::Tuple || v.kind == Kind::Dict);
     }},
    {"sequence",
     [](const Value& v, CallArgs& a) {
       return no_arguments("sequence", a) && (v.is_string() || v.is_sequence() || v.kind == Kind::Dict);
     }},
    {"number", [](const Value& v, CallArgs& a) { return no_arguments("number", a) && v.is_number(); }},
    {"integer", [](const Value& v, CallArgs& a) { return no_arguments("integer", a) && integer_value(v); }},
    {"float", [](const Value& v, CallArgs& a) { return no_arguments("float", a) && v.kind == Kind::Float; }},
    {"boolean", [](const Value& v, CallArgs& a) { return no_arguments("boolean", a) && v.kind == Kind::Bool; }},
    {"true", [](const Value& v, CallArgs& a) { return no_arguments("true", a) && v.kind == Kind::Bool && v.b; }},
    {"false", [](const Value& v, CallArgs& a) { return no_arguments("false", a) && v.kind == Kind::Bool && !v.b; }},
    {"callable", [](const Value& v, CallArgs& a) { return no_arguments("callable", a) && v.kind == Kind::Callable; }},
    {"odd",
     [](const Value& v, CallArgs& a) {
       no_arguments("odd", a);
       if (!v.is_integral()) fail("odd: expected an int, got " + type_name(v));
       return v.as_int() % 2 != 0;
     }},
    {"even",
     [](const Value& v, CallArgs& a) {
       no_arguments("even", a);
       if (!v.is_integral()) fail("even: expected an int, got " + type_name(v));
       return v.as_int() % 2 == 0;
     }},
    {"divisibleby",
     [](const Value& v, CallArgs& a) {
       const Value& n = one_argument("divisibleby", a);
       if (!v.is_integral() || !n.is_integral() || n.as_int() == 0) fail("divisibleby: expected non-zero ints");
       return v.as_int() % n.as_int() == 0;
     }},
    {"eq", is_eq},
    {"equalto", is_eq},
    {"==", is_eq},
    {"ne", is_ne},
    {"!=", is_ne},
    {"lt", is_lt},
    {"lessthan", is_lt},
    {"<", is_lt},
    {"le", is_le},
    {"<=", is_le},
    {"gt", is_gt},
    {"greaterthan", is_gt},
    {">", is_gt},
    {"ge", is_ge},
    {">=", is_ge},
    {"in", [](const Value& v, CallArgs& a) { return contains(one_argument("in", a), v); }},
    {"sameas",
     [](const Value& v, CallArgs& a) {
       const Value& o = one_argument("sameas", a);
       if (v.kind != o.kind) return false;
       switch (v.kind) {
         case Kind::None:
         case Kind::Undefined: return true;
         case Kind::Bool: return v.b == o.b;
         case Kind::List:
         case Kind::Tuple: return v.list == o.list;
         case Kind::Dict: return v.dict == o.dict;
         case Kind::Object: return v.object == o.object;
         default: return equal(v, o);
       }
     }},
    {"lower",
     [](const Value& v, CallArgs& a) { no_arguments("lower", a); std::string s = to_str(v); return ascii_lower(s) == s; }},
    {"upper",
     [](const Value& v, CallArgs& a) { no_arguments("upper", a); std::string s = to_str(v); return ascii_upper(s) == s; }},
    {"escaped", [](const Value& v, CallArgs& a) { return no_arguments("escaped", a) && v.safe; }},
    {"filter", [](const Value& v, CallArgs& a) { return no_arguments("filter", a) && v.is_string() && filter_exists(v.s); }},
    {"test", [](const Value& v, CallArgs& a) { return no_arguments("test", a) && v.is_string() && test_exists(v.s); }},
};

}  // namespace

bool test_exists(std::string_view name) { return find_named(kTests, name) != nullptr; }

bool apply_test(std::string_view name, const Value& v, CallArgs& args) {
  return named_or_fail(kTests, "test", name)(v, args);
}

}  // namespace r1pi::jinja
