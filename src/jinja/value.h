// The values a template computes with, modelled on the Python objects jinja2 sees: None, bool,
// int and float kept apart (True == 1 as in Python), str (UTF-8; "safe" marks jinja2's Markup),
// list, tuple, dict (insertion order), attribute-only objects (namespace(), loop) and callables.
// Lists and dicts are shared, as Python shares them; the immutable sandbox never mutates them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "jinja/jinja.h"

namespace r1pi::jinja {

enum class Kind { Undefined, None, Bool, Int, Float, String, List, Tuple, Dict, Object, Callable };

struct Value;
using List = std::vector<Value>;
struct Dict;
struct Object;
struct CallArgs;
using Function = std::function<Value(CallArgs&)>;

struct Value {
  Kind kind = Kind::Undefined;
  bool safe = false;  // a String that is Markup (|safe, |escape)
  // A List that is a Python generator (|map, |select, ...): iterable, but without len(),
  // JSON or a printable form, and always true.
  bool generator = false;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // String; for Undefined, what was undefined ("'x' is undefined")
  std::shared_ptr<List> list;  // List, Tuple
  std::shared_ptr<Dict> dict;  // Dict
  std::shared_ptr<Object> object;  // Object
  std::shared_ptr<Function> fn;  // Callable

  static Value undefined(std::string what);
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value number(double v);
  static Value string(std::string v, bool safe = false);
  static Value make_list(List items = {});
  static Value make_tuple(List items);
  static Value make_generator(List items);
  static Value make_dict();
  static Value make_object(std::string type_name, bool mutable_attributes);
  static Value callable(std::string name, Function fn);

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_sequence() const { return (kind == Kind::List || kind == Kind::Tuple) && !generator; }
  bool is_number() const { return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float; }
  bool is_integral() const { return kind == Kind::Bool || kind == Kind::Int; }
  int64_t as_int() const { return kind == Kind::Bool ? int64_t(b) : i; }
  double as_double() const { return kind == Kind::Float ? f : double(as_int()); }
};

struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);
};

// Names bound to values, in the order they were first bound (an object's fields, a scope's
// variables): the value bound to a name or null; binding a name again replaces its value in place.
using Fields = std::vector<std::pair<std::string, Value>>;
const Value* find_field(const Fields& fields, std::string_view name);
void set_field(Fields& fields, std::string_view name, Value value);

// namespace() and loop: fields reached by attribute (and by item, as jinja2 falls back).
struct Object {
  std::string type_name;
  bool mutable_attributes;
  Fields fields;
  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// A failure of an operation on values (a type error, a misused undefined): the renderer adds
// where in the template it happened and throws Error.
struct ValueError : Error {
  using Error::Error;
};
[[noreturn]] void fail(const std::string& message);
// An undefined value used where jinja2's Undefined raises.
[[noreturn]] void fail_undefined(const Value& v);

Value from_json(const nlohmann::ordered_json& j);
// Python's type name for messages ("str", "dict", "NoneType").
std::string type_name(const Value& v);
bool truthy(const Value& v);
bool equal(const Value& a, const Value& b);  // Python's ==
bool less(const Value& a, const Value& b);  // Python's <; ValueError for types Python refuses
// Python's len() (the number of code points of a string).
int64_t length(const Value& v);
// What iterating gives in Python: a list's items, a dict's keys, a string's characters; an
// undefined value iterates as empty, as jinja2's Undefined does.
List iterate(const Value& v);

}  // namespace r1pi::jinja
