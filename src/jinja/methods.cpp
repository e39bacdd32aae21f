// obj.name, obj[key], obj[a:b:c] and the methods of str, dict and list that templates call, as
// jinja2's ImmutableSandboxedEnvironment resolves them: obj.name tries the attribute, then the
// item; obj[key] the item, then the attribute; a miss is an undefined value that says what was
// missing; methods that would change a list or a dict are refused.
#include <algorithm>
#include <cstring>

#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

namespace {

using Method = Named<Value (*)(const Value& self, CallArgs& args)>;

std::string object_type_repr(const Value& v) {
  return v.is_none() ? "None" : type_name(v) + " object";
}

Value missing_attribute(const Value& obj, const std::string& name) {
  return Value::undefined(repr(Value::string(object_type_repr(obj))) + " has no attribute " + repr(Value::string(name)));
}

// Python's index into a sequence of n: negative counts from the end; -1 when out of range.
int64_t python_index(int64_t k, int64_t n) {
  if (k < 0) k += n;
  return k < 0 || k >= n ? -1 : k;
}

std::optional<std::string> optional_string(const Bound& b, size_t k) {
  if (!b.given(k) || b[k].is_none()) return std::nullopt;
  if (!b[k].is_string()) fail("expected a str, got " + type_name(b[k]));
  return b[k].s;
}

std::string required_string(const Bound& b, size_t k, const char* what) {
  if (!b.given(k)) fail(std::string(what) + "() is missing an argument");
  if (!b[k].is_string()) fail(std::string(what) + "() argument must be str, not " + type_name(b[k]));
  return b[k].s;
}

Value strip_method(const Value& self, CallArgs& args, const char* name, bool left, bool right) {
  Bound b(name, args, {"chars"});
  return Value::string(strip(self.s, optional_string(b, 0), left, right));
}

Value split_method(const Value& self, CallArgs& args, bool from_right) {
  Bound b(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"});
  List parts;
  for (auto& p : split(self.s, optional_string(b, 0), b.integer(1, -1), from_right))
    parts.push_back(Value::string(std::move(p)));
  return Value::make_list(std::move(parts));
}

Value affix_method(const Value& self, CallArgs& args, bool prefix) {
  Bound b(prefix ? "startswith" : "endswith", args, {"affix"});
  std::vector<std::string> affixes;
  if (b[0].is_sequence()) {
    for (auto& e : *b[0].list) affixes.push_back(e.s);
  } else {
    affixes.push_back(required_string(b, 0, prefix ? "startswith" : "endswith"));
  }
  const std::string& s = self.s;
  for (auto& a : affixes)
    if (a.size() <= s.size() && (prefix ? s.compare(0, a.size(), a) : s.compare(s.size() - a.size(), a.size(), a)) == 0)
      return Value::boolean(true);
  return Value::boolean(false);
}

int64_t code_points_before(const std::string& s, size_t bytes) {
  return std::count_if(s.begin(), s.begin() + long(bytes), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; });
}

Value find_method(const Value& self, CallArgs& args, bool from_right, bool must_find) {
  Bound b(from_right ? "rfind" : "find", args, {"sub"});
  std::string sub = required_string(b, 0, from_right ? "rfind" : "find");
  size_t hit = from_right ? self.s.rfind(sub) : self.s.find(sub);
  if (hit == std::string::npos) {
    if (must_find) fail("substring not found");
    return Value::integer(-1);
  }
  return Value::integer(code_points_before(self.s, hit));
}

template <bool (*Pred)(char)>
Value char_class(const Value& self, CallArgs& args) {
  Bound b("is", args, {});
  return Value::boolean(!self.s.empty() && std::all_of(self.s.begin(), self.s.end(), Pred));
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
bool is_space_char(char c) { return is_space(char32_t(static_cast<unsigned char>(c))); }

const Method kStringMethods[] = {
    {"strip", [](const Value& s, CallArgs& a) { return strip_method(s, a, "strip", true, true); }},
    {"lstrip", [](const Value& s, CallArgs& a) { return strip_method(s, a, "lstrip", true, false); }},
    {"rstrip", [](const Value& s, CallArgs& a) { return strip_method(s, a, "rstrip", false, true); }},
    {"split", [](const Value& s, CallArgs& a) { return split_method(s, a, false); }},
    {"rsplit", [](const Value& s, CallArgs& a) { return split_method(s, a, true); }},
    {"startswith", [](const Value& s, CallArgs& a) { return affix_method(s, a, true); }},
    {"endswith", [](const Value& s, CallArgs& a) { return affix_method(s, a, false); }},
    {"find", [](const Value& s, CallArgs& a) { return find_method(s, a, false, false); }},
    {"rfind", [](const Value& s, CallArgs& a) { return find_method(s, a, true, false); }},
    {"index", [](const Value& s, CallArgs& a) { return find_method(s, a, false, true); }},
    {"rindex", [](const Value& s, CallArgs& a) { return find_method(s, a, true, true); }},
    {"upper", [](const Value& s, CallArgs& a) { Bound b("upper", a, {}); return Value::string(ascii_upper(s.s)); }},
    {"lower", [](const Value& s, CallArgs& a) { Bound b("lower", a, {}); return Value::string(ascii_lower(s.s)); }},
    {"title", [](const Value& s, CallArgs& a) { Bound b("title", a, {}); return Value::string(str_title(s.s)); }},
    {"capitalize",
     [](const Value& s, CallArgs& a) { Bound b("capitalize", a, {}); return Value::string(capitalize(s.s)); }},
    {"replace",
     [](const Value& s, CallArgs& a) {
       Bound b("replace", a, {"old", "new", "count"});
       return Value::string(
           replace(s.s, required_string(b, 0, "replace"), required_string(b, 1, "replace"), b.integer(2, -1)));
     }},
    {"count",
     [](const Value& s, CallArgs& a) {
       Bound b("count", a, {"sub"});
       std::string sub = required_string(b, 0, "count");
       if (sub.empty()) return Value::integer(length(s) + 1);
       int64_t n = 0;
       for (size_t k = s.s.find(sub); k != std::string::npos; k = s.s.find(sub, k + sub.size())) ++n;
       return Value::integer(n);
     }},
    {"join",
     [](const Value& s, CallArgs& a) {
       Bound b("join", a, {"iterable"});
       std::string out;
       bool first = true;
       for (auto& e : iterate(b[0])) {
         if (!e.is_string()) fail("sequence item: expected str instance, " + type_name(e) + " found");
         if (!first) out += s.s;
         first = false;
         out += e.s;
       }
       return Value::string(std::move(out));
     }},
    {"splitlines",
     [](const Value& s, CallArgs& a) {
       Bound b("splitlines", a, {"keepends"});
       bool keep = b.given(0) && truthy(b[0]);
       List lines;
       size_t start = 0;
       for (size_t k = 0; k < s.s.size(); ++k) {
         if (s.s[k] != '\n' && s.s[k] != '\r') continue;
         size_t end = k + (s.s[k] == '\r' && k + 1 < s.s.size() && s.s[k + 1] == '\n' ? 1 : 0);
         lines.push_back(Value::string(s.s.substr(start, (keep ? end + 1 : k) - start)));
         k = end;
         start = end + 1;
       }
       if (start < s.s.size()) lines.push_back(Value::string(s.s.substr(start)));
       return Value::make_list(std::move(lines));
     }},
    {"isdigit", char_class<is_digit>},
    {"isalpha", char_class<is_alpha>},
    {"isalnum", char_class<is_alnum>},
    {"isspace", char_class<is_space_char>},
};

List dict_items(const Value& d) {
  List items;
  items.reserve(d.dict->items.size());
  for (auto& [k, v] : d.dict->items) items.push_back(Value::make_tuple({k, v}));
  return items;
}

const Method kDictMethods[] = {
    {"items", [](const Value& d, CallArgs& a) { Bound b("items", a, {}); return Value::make_list(dict_items(d)); }},
    {"keys", [](const Value& d, CallArgs& a) { Bound b("keys", a, {}); return Value::make_list(iterate(d)); }},
    {"values",
     [](const Value& d, CallArgs& a) {
       Bound b("values", a, {});
       List values;
       for (auto& kv : d.dict->items) values.push_back(kv.second);
       return Value::make_list(std::move(values));
     }},
    {"get",
     [](const Value& d, CallArgs& a) {
       Bound b("get", a, {"key", "default"});
       const Value* v = d.dict->find(b[0]);
       return v ? *v : b.given(1) ? b[1] : Value::none();
     }},
    {"copy", [](const Value& d, CallArgs& a) { Bound b("copy", a, {}); Value c = Value::make_dict(); *c.dict = *d.dict; return c; }},
};

const Method kListMethods[] = {
    {"index",
     [](const Value& l, CallArgs& a) {
       Bound b("index", a, {"value"});
       for (size_t k = 0; k < l.list->size(); ++k)
         if (equal((*l.list)[k], b[0])) return Value::integer(int64_t(k));
       fail(repr(b[0]) + " is not in list");
     }},
    {"count",
     [](const Value& l, CallArgs& a) {
       Bound b("count", a, {"value"});
       return Value::integer(std::count_if(l.list->begin(), l.list->end(), [&](auto& e) { return equal(e, b[0]); }));
     }},
    {"copy", [](const Value& l, CallArgs& a) { Bound b("copy", a, {}); return Value::make_list(*l.list); }},
};

// What the immutable sandbox refuses: the methods that change a list or a dict in place.
const char* const kUnsafeListMethods[] = {"append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"};
const char* const kUnsafeDictMethods[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
bool listed(const char* const (&names)[N], std::string_view name) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return name == n; });
}

Value bind(const Value& self, const Method& m) {
  return Value::callable(m.name, [self, fn = m.fn](CallArgs& args) { return fn(self, args); });
}

// getattr(obj, name) in the sandbox; nullopt when Python has no such attribute.
std::optional<Value> python_attribute(const Value& obj, const std::string& name) {
  if (obj.generator) return std::nullopt;
  auto unsafe = [&] {
    return Value::undefined("access to attribute " + repr(Value::string(name)) + " of " +
                            repr(Value::string(type_name(obj))) + " object is unsafe.");
  };
  if (!name.empty() && name[0] == '_') return unsafe();
  const Method* m = nullptr;
  switch (obj.kind) {
    case Kind::String: m = find_named(kStringMethods, name); break;
    case Kind::Dict:
      if (listed(kUnsafeDictMethods, name)) return unsafe();
      m = find_named(kDictMethods, name);
      break;
    case Kind::List:
      if (listed(kUnsafeListMethods, name)) return unsafe();
      m = find_named(kListMethods, name);
      break;
    case Kind::Tuple:
      m = name == "copy" ? nullptr : find_named(kListMethods, name);
      break;
    case Kind::Object:
      if (const Value* v = obj.object->find(name)) return *v;
      break;
    default: break;
  }
  if (m) return bind(obj, *m);
  return std::nullopt;
}

// obj[key] in Python; nullopt when it raises (a missing key, an index out of range, a type
// that has no items).
std::optional<Value> python_item(const Value& obj, const Value& key) {
  if (obj.generator) return std::nullopt;
  switch (obj.kind) {
    case Kind::Dict:
      if (const Value* v = obj.dict->find(key)) return *v;
      return std::nullopt;
    case Kind::List:
    case Kind::Tuple: {
      if (!key.is_integral()) return std::nullopt;
      int64_t k = python_index(key.as_int(), int64_t(obj.list->size()));
      if (k < 0) return std::nullopt;
      return (*obj.list)[size_t(k)];
    }
    case Kind::String: {
      if (!key.is_integral()) return std::nullopt;
      std::u32string cps = decode_utf8(obj.s);
      int64_t k = python_index(key.as_int(), int64_t(cps.size()));
      if (k < 0) return std::nullopt;
      return Value::string(encode_utf8(cps.substr(size_t(k), 1)));
    }
    case Kind::Object:
      if (key.is_string())
        if (const Value* v = obj.object->find(key.s)) return *v;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Python's slice indices for a sequence of n items.
std::vector<size_t> slice_indices(int64_t n, const Value& start, const Value& stop, const Value& step) {
  auto as_index = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_integral()) fail(std::string("slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  int64_t st = as_index(step, "step").value_or(1);
  if (st == 0) fail("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t k = *v < 0 ? *v + n : *v;
    if (st > 0) return std::clamp<int64_t>(k, 0, n);
    return std::clamp<int64_t>(k, -1, n - 1);
  };
  int64_t begin = clamp(as_index(start, "start"), st > 0 ? 0 : n - 1);
  int64_t end = clamp(as_index(stop, "stop"), st > 0 ? n : -1);
  std::vector<size_t> picked;
  for (int64_t k = begin; st > 0 ? k < end : k > end; k += st) picked.push_back(size_t(k));
  return picked;
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (auto v = python_attribute(obj, name)) return *v;
  if (auto v = python_item(obj, Value::string(name))) return *v;
  return missing_attribute(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (auto v = python_item(obj, key)) return *v;
  if (key.is_string()) {
    if (auto v = python_attribute(obj, key.s)) return *v;
    return missing_attribute(obj, key.s);
  }
  return Value::undefined(object_type_repr(obj) + " has no element " + repr(key));
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_string()) {
    std::u32string cps = decode_utf8(obj.s);
    std::u32string out;
    for (size_t k : slice_indices(int64_t(cps.size()), start, stop, step)) out += cps[k];
    return Value::string(encode_utf8(out));
  }
  if (!obj.is_sequence()) fail("'" + type_name(obj) + "' object is not subscriptable");
  List out;
  for (size_t k : slice_indices(int64_t(obj.list->size()), start, stop, step)) out.push_back((*obj.list)[k]);
  return obj.kind == Kind::Tuple ? Value::make_tuple(std::move(out)) : Value::make_list(std::move(out));
}

}  // namespace r1pi::jinja
