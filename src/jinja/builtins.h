// What templates call by name: filters (x | trim), tests (x is string), attribute and item lookup
// with the methods of str, dict and list (x.strip(), d.items()), as jinja2's immutable sandbox
// gives them, and the arithmetic and comparison operators with Python's semantics.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "jinja/value.h"

namespace r1pi::jinja {

// A call's arguments bound to parameter names the Python way (positional, then by keyword);
// refuses unknown keywords and too many positional arguments.
class Bound {
 public:
  Bound(std::string_view function, CallArgs& args, std::initializer_list<const char*> names);
  bool given(size_t k) const { return given_[k]; }
  const Value& operator[](size_t k) const { return values_[k]; }
  // The argument as an int / a str; `fallback` when not given.
  int64_t integer(size_t k, int64_t fallback) const;
  std::string string(size_t k, std::string fallback) const;

 private:
  std::vector<Value> values_;
  std::vector<bool> given_;
  std::string function_;
};

// One builtin of a kind (a filter, a test, a method) in its kind's table, found by name.
template <typename Fn>
struct Named {
  const char* name;
  Fn fn;
};
template <typename Fn, size_t N>
const Named<Fn>* find_named(const Named<Fn> (&table)[N], std::string_view name) {
  for (const auto& entry : table)
    if (name == entry.name) return &entry;
  return nullptr;
}

// The function of that name in its kind's table; ValueError ("no filter named 'x'") where none is.
template <typename Fn, size_t N>
Fn named_or_fail(const Named<Fn> (&table)[N], const char* kind, std::string_view name) {
  if (const Named<Fn>* entry = find_named(table, name)) return entry->fn;
  fail("no " + std::string(kind) + " named '" + std::string(name) + "'");
}

// x | name(args); ValueError for an unknown filter.
Value apply_filter(std::string_view name, const Value& v, CallArgs& args);
bool filter_exists(std::string_view name);
// x is name(args); ValueError for an unknown test.
bool apply_test(std::string_view name, const Value& v, CallArgs& args);
bool test_exists(std::string_view name);

// obj.name and obj[key] as jinja2 resolves them (attribute first, or item first), giving an
// undefined value that says what was missing, and refusing what the immutable sandbox refuses.
Value get_attribute(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Python's binary operators: + - * / // % ** and ~ (the names as templates write them).
Value binary_op(std::string_view op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);  // item in container
Value negate(const Value& v);

}  // namespace r1pi::jinja
