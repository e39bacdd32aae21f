#include "jinja/value.h"

#include <algorithm>

#include "jinja/python_text.h"

namespace r1pi::jinja {

// Value is an aggregate: each maker names the members its kind uses. (GCC 12 warns of every member
// a designated initializer leaves out, although each has its default member initializer.)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
Value Value::undefined(std::string what) { return {.s = std::move(what)}; }
Value Value::none() { return {.kind = Kind::None}; }
Value Value::boolean(bool b) { return {.kind = Kind::Bool, .b = b}; }
Value Value::integer(int64_t i) { return {.kind = Kind::Int, .i = i}; }
Value Value::number(double f) { return {.kind = Kind::Float, .f = f}; }
Value Value::string(std::string s, bool safe) { return {.kind = Kind::String, .safe = safe, .s = std::move(s)}; }

Value Value::make_list(List items) {
  return {.kind = Kind::List, .list = std::make_shared<List>(std::move(items))};
}

Value Value::make_tuple(List items) {
  return {.kind = Kind::Tuple, .list = std::make_shared<List>(std::move(items))};
}

Value Value::make_generator(List items) {
  return {.kind = Kind::List, .generator = true, .list = std::make_shared<List>(std::move(items))};
}

Value Value::make_dict() { return {.kind = Kind::Dict, .dict = std::make_shared<Dict>()}; }

Value Value::make_object(std::string type_name, bool mutable_attributes) {
  return {.kind = Kind::Object,
          .object = std::make_shared<Object>(Object{std::move(type_name), mutable_attributes, {}})};
}

Value Value::callable(std::string name, Function fn) {
  return {.kind = Kind::Callable, .s = std::move(name), .fn = std::make_shared<Function>(std::move(fn))};
}

const Value* Dict::find(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.s));
  for (auto& [k, v] : items)
    if (equal(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (auto& [k, v] : items)
    if (k.is_string() && k.s == key) return &v;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& [k, v] : items)
    if (equal(k, key)) {
      v = std::move(value);
      return;
    }
  items.emplace_back(std::move(key), std::move(value));
}

const Value* find_field(const Fields& fields, std::string_view name) {
  for (auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

void set_field(Fields& fields, std::string_view name, Value value) {
  for (auto& [k, v] : fields)
    if (k == name) {
      v = std::move(value);
      return;
    }
  fields.emplace_back(std::string(name), std::move(value));
}

const Value* Object::find(std::string_view name) const { return find_field(fields, name); }
void Object::set(std::string_view name, Value value) { set_field(fields, name, std::move(value)); }

void fail(const std::string& message) { throw ValueError(message); }

void fail_undefined(const Value& v) { fail(v.s.empty() ? "value is undefined" : v.s); }

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      if (j.get<uint64_t>() > uint64_t(INT64_MAX)) fail("integer " + j.dump() + " is out of range");
      return Value::integer(int64_t(j.get<uint64_t>()));
    case nlohmann::json::value_t::number_float:
      return Value::number(j.get<double>());
    case nlohmann::json::value_t::string:
      return Value::string(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (auto& e : j) items.push_back(from_json(e));
      return Value::make_list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Value d = Value::make_dict();
      d.dict->items.reserve(j.size());
      for (auto& [k, e] : j.items()) d.dict->items.emplace_back(Value::string(k), from_json(e));
      return d;
    }
    default:
      fail("binary JSON values are not template values");
  }
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return v.safe ? "Markup" : "str";
    case Kind::List: return v.generator ? "generator" : "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    case Kind::Object: return v.object->type_name;
    case Kind::Callable: return "function";
  }
  return "object";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return v.b;
    case Kind::Int: return v.i != 0;
    case Kind::Float: return v.f != 0;
    case Kind::String: return !v.s.empty();
    case Kind::List:
    case Kind::Tuple: return v.generator || !v.list->empty();
    case Kind::Dict: return !v.dict->items.empty();
    case Kind::Object:
    case Kind::Callable: return true;
  }
  return false;
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind || a.generator || b.generator) return a.generator && b.generator && a.list == b.list;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return a.s == b.s;
    case Kind::List:
    case Kind::Tuple:
      return a.list->size() == b.list->size() &&
             std::equal(a.list->begin(), a.list->end(), b.list->begin(), [](auto& x, auto& y) { return equal(x, y); });
    case Kind::Dict: {
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (auto& [k, v] : a.dict->items) {
        const Value* other = b.dict->find(k);
        if (!other || !equal(v, *other)) return false;
      }
      return true;
    }
    case Kind::Object: return a.object == b.object;
    case Kind::Callable: return a.fn == b.fn;
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.s < b.s;  // UTF-8 byte order is code-point order
  if (a.kind == b.kind && a.is_sequence() && b.is_sequence()) {
    const List &x = *a.list, &y = *b.list;
    for (size_t k = 0; k < x.size() && k < y.size(); ++k)
      if (!equal(x[k], y[k])) return less(x[k], y[k]);
    return x.size() < y.size();
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  fail("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

int64_t length(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return 0;
    case Kind::String: return is_ascii(v.s) ? int64_t(v.s.size()) : int64_t(decode_utf8(v.s).size());
    case Kind::List:
    case Kind::Tuple:
      if (v.generator) fail("object of type 'generator' has no len()");
      return int64_t(v.list->size());
    case Kind::Dict: return int64_t(v.dict->items.size());
    default: fail("object of type '" + type_name(v) + "' has no len()");
  }
}

List iterate(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return {};
    case Kind::String: {
      List chars;
      for (char32_t c : decode_utf8(v.s)) chars.push_back(Value::string(encode_utf8(std::u32string(1, c))));
      return chars;
    }
    case Kind::List:
    case Kind::Tuple: return *v.list;
    case Kind::Dict: {
      List keys;
      keys.reserve(v.dict->items.size());
      for (auto& [k, e] : v.dict->items) keys.push_back(k);
      return keys;
    }
    default: fail("'" + type_name(v) + "' object is not iterable");
  }
}

}  // namespace r1pi::jinja
