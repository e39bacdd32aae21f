// jinja2's filters (3.1), and tojson as transformers replaces it: json.dumps with
// ensure_ascii=False. Filters that give a generator in jinja2 (map, select, ...) give a list here:
// the same items for |list, |join, |length and loops.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

namespace {

using Filter = Named<Value (*)(const Value& v, CallArgs& args)>;

// make_attrgetter: "a.b.0" looks up a, then b, then item 0, each item first.
Value lookup_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = get_item(v, numeric ? Value::integer(std::stoll(part)) : Value::string(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

// The key jinja2 compares by when case_sensitive is false: lowercased strings.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value::string(ascii_lower(v.s)) : v;
}

Value tojson(const Value& v, CallArgs& args) {
  Bound b("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  if (b.given(0) && truthy(b[0])) fail("tojson: ensure_ascii=True is not supported");
  JsonStyle style;
  if (b.given(1) && !b[1].is_none()) {
    if (b[1].is_string()) style.indent = b[1].s;
    else style.indent = std::string(size_t(std::max<int64_t>(0, b.integer(1, 0))), ' ');
    style.item_separator = ",";
  }
  if (b.given(2) && !b[2].is_none()) {
    if (!b[2].is_sequence() || b[2].list->size() != 2) fail("tojson: separators must be an (item, key) pair");
    style.item_separator = to_str((*b[2].list)[0]);
    style.key_separator = to_str((*b[2].list)[1]);
  }
  style.sort_keys = b.given(3) && truthy(b[3]);
  return Value::string(dumps(v, style));
}

Value string_arg(const Value& v) {
  if (v.is_undefined()) return Value::string("");
  return Value::string(to_str(v), v.safe);
}

Value do_length(const Value& v, CallArgs& args) {
  Bound b("length", args, {});
  return Value::integer(length(v));
}

Value do_trim(const Value& v, CallArgs& args) {
  Bound b("trim", args, {"chars"});
  std::optional<std::string> chars;
  if (b.given(0) && !b[0].is_none()) chars = to_str(b[0]);
  return Value::string(strip(to_str(v), chars, true, true));
}

Value do_title(const Value& v, CallArgs& args) {
  Bound b("title", args, {});
  // Words begin after "-", whitespace, or one of ({[<; each is capitalized.
  std::string s = to_str(v), out;
  bool word_start = true;
  for (char c : s) {
    bool separator = c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
                     c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) out += c;
    else out += word_start ? ascii_upper(std::string(1, c)) : ascii_lower(std::string(1, c));
    word_start = separator;
  }
  return Value::string(std::move(out));
}

Value do_join(const Value& v, CallArgs& args) {
  Bound b("join", args, {"d", "attribute"});
  std::string sep = b.string(0, ""), out;
  bool first = true;
  for (auto& e : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += to_str(b.given(1) ? lookup_path(e, to_str(b[1])) : e);
  }
  return Value::string(std::move(out));
}

Value do_default(const Value& v, CallArgs& args) {
  Bound b("default", args, {"default_value", "boolean"});
  bool use_default = v.is_undefined() || (b.given(1) && truthy(b[1]) && !truthy(v));
  if (!use_default) return v;
  return b.given(0) ? b[0] : Value::string("");
}

Value do_first(const Value& v, CallArgs& args) {
  Bound b("first", args, {});
  List items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value do_last(const Value& v, CallArgs& args) {
  Bound b("last", args, {});
  if (v.generator) fail("'generator' object is not reversible");
  List items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value do_items(const Value& v, CallArgs& args) {
  Bound b("items", args, {});
  if (v.is_undefined()) return Value::make_generator({});
  if (v.kind != Kind::Dict) fail("Can only get item pairs from a mapping.");
  List items;
  for (auto& [k, e] : v.dict->items) items.push_back(Value::make_tuple({k, e}));
  return Value::make_generator(std::move(items));
}

// select / reject / selectattr / rejectattr
Value select_or_reject(const Value& v, CallArgs& args, bool keep_when, bool by_attribute, const char* name) {
  std::string attribute;
  size_t next = 0;
  if (by_attribute) {
    if (args.positional.empty()) fail(std::string(name) + "() needs an attribute name");
    attribute = to_str(args.positional[0]);
    next = 1;
  }
  std::string test;
  CallArgs test_args;
  if (args.positional.size() > next) {
    test = to_str(args.positional[next]);
    test_args.positional.assign(args.positional.begin() + long(next) + 1, args.positional.end());
    test_args.keyword = args.keyword;
  }
  List out;
  for (auto& item : iterate(v)) {
    Value subject = by_attribute ? lookup_path(item, attribute) : item;
    CallArgs call_args = test_args;
    bool passed = test.empty() ? truthy(subject) : apply_test(test, subject, call_args);
    if (passed == keep_when) out.push_back(item);
  }
  return Value::make_generator(std::move(out));
}

Value do_map(const Value& v, CallArgs& args) {
  List out;
  if (args.positional.empty()) {
    Bound b("map", args, {"attribute", "default"});
    if (!b.given(0)) fail("map() needs a filter name or attribute=");
    for (auto& item : iterate(v)) {
      Value e = lookup_path(item, to_str(b[0]));
      out.push_back(e.is_undefined() && b.given(1) ? b[1] : e);
    }
    return Value::make_generator(std::move(out));
  }
  std::string filter = to_str(args.positional[0]);
  CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
  for (auto& item : iterate(v)) {
    CallArgs call_args = rest;
    out.push_back(apply_filter(filter, item, call_args));
  }
  return Value::make_generator(std::move(out));
}

Value do_unique(const Value& v, CallArgs& args) {
  Bound b("unique", args, {"case_sensitive", "attribute"});
  bool case_sensitive = b.given(0) && truthy(b[0]);
  List out, seen;
  for (auto& item : iterate(v)) {
    Value key = sort_key(b.given(1) ? lookup_path(item, to_str(b[1])) : item, case_sensitive);
    if (std::any_of(seen.begin(), seen.end(), [&](auto& s) { return equal(s, key); })) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::make_generator(std::move(out));
}

Value do_int(const Value& v, CallArgs& args) {
  Bound b("int", args, {"default", "base"});
  Value fallback = b.given(0) ? b[0] : Value::integer(0);
  if (v.is_integral()) return Value::integer(v.as_int());
  if (v.kind == Kind::Float) return std::isfinite(v.f) ? Value::integer(int64_t(v.f)) : fallback;
  if (!v.is_string()) return fallback;
  std::string s = strip(v.s, std::nullopt, true, true);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  int base = int(b.integer(1, 10));
  try {
    size_t used = 0;
    long long n = std::stoll(s, &used, base);
    if (used == s.size()) return Value::integer(n);
  } catch (const std::exception&) {
  }
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size() && std::isfinite(d)) return Value::integer(int64_t(d));
  } catch (const std::exception&) {
  }
  return fallback;
}

Value do_float(const Value& v, CallArgs& args) {
  Bound b("float", args, {"default"});
  Value fallback = b.given(0) ? b[0] : Value::number(0.0);
  if (v.is_number()) return Value::number(v.as_double());
  if (!v.is_string()) return fallback;
  std::string s = strip(v.s, std::nullopt, true, true);
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return Value::number(d);
  } catch (const std::exception&) {
  }
  return fallback;
}

Value do_indent(const Value& v, CallArgs& args) {
  Bound b("indent", args, {"width", "first", "blank"});
  std::string indention = b.given(0) && b[0].is_string() ? b[0].s : std::string(size_t(std::max<int64_t>(0, b.integer(0, 4))), ' ');
  bool first = b.given(1) && truthy(b[1]), blank = b.given(2) && truthy(b[2]);
  std::string s = to_str(v) + "\n";  // jinja2 adds a newline so that the last line counts
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] != '\n' && s[k] != '\r') continue;
    lines.push_back(s.substr(start, k - start));
    if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
    start = k + 1;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k) {
      out += "\n";
      if (blank || !lines[k].empty()) out += indention;
    }
    out += lines[k];
  }
  if (first) out = indention + out;
  return Value::string(std::move(out));
}

Value do_dictsort(const Value& v, CallArgs& args) {
  Bound b("dictsort", args, {"case_sensitive", "by", "reverse"});
  if (v.kind != Kind::Dict) fail("dictsort: expected a dict, got " + type_name(v));
  bool case_sensitive = b.given(0) && truthy(b[0]), reverse = b.given(2) && truthy(b[2]);
  std::string by = b.string(1, "key");
  if (by != "key" && by != "value") fail("You can only sort by either \"key\" or \"value\"");
  size_t pos = by == "key" ? 0 : 1;
  List items;
  for (auto& [k, e] : v.dict->items) items.push_back(Value::make_tuple({k, e}));
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    Value kx = sort_key((*x.list)[pos], case_sensitive), ky = sort_key((*y.list)[pos], case_sensitive);
    return reverse ? less(ky, kx) : less(kx, ky);
  });
  return Value::make_list(std::move(items));
}

Value do_sort(const Value& v, CallArgs& args) {
  Bound b("sort", args, {"reverse", "case_sensitive", "attribute"});
  bool reverse = b.given(0) && truthy(b[0]), case_sensitive = b.given(1) && truthy(b[1]);
  List items = iterate(v);
  auto key = [&](const Value& e) { return sort_key(b.given(2) ? lookup_path(e, to_str(b[2])) : e, case_sensitive); };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Value& x, const Value& y) { return reverse ? less(key(y), key(x)) : less(key(x), key(y)); });
  return Value::make_list(std::move(items));
}

Value do_reverse(const Value& v, CallArgs& args) {
  Bound b("reverse", args, {});
  if (v.is_string()) {
    std::u32string cps = decode_utf8(v.s);
    std::reverse(cps.begin(), cps.end());
    return Value::string(encode_utf8(cps));
  }
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  // reversed() of a list or a dict is an iterator; of anything else, jinja2 builds a list.
  return v.is_sequence() || v.kind == Kind::Dict ? Value::make_generator(std::move(items)) : Value::make_list(std::move(items));
}

Value do_round(const Value& v, CallArgs& args) {
  Bound b("round", args, {"precision", "method"});
  int64_t precision = b.integer(0, 0);
  std::string method = b.string(1, "common");
  if (method != "common" && method != "ceil" && method != "floor")
    fail("method must be 'common', 'ceil' or 'floor'");
  if (!v.is_number()) fail("round: expected a number, got " + type_name(v));
  if (method == "common" && v.is_integral()) return Value::integer(v.as_int());
  double scale = std::pow(10.0, double(precision));
  if (method == "ceil") return Value::number(std::ceil(v.as_double() * scale) / scale);
  if (method == "floor") return Value::number(std::floor(v.as_double() * scale) / scale);
  // Python's round(): the decimal nearest the exact binary value, ties to even.
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", int(std::clamp<int64_t>(precision, 0, 300)), v.f);
  double r = precision >= 0 ? std::strtod(buf, nullptr) : std::nearbyint(v.f / std::pow(10.0, double(-precision))) * std::pow(10.0, double(-precision));
  return Value::number(r);
}

Value do_abs(const Value& v, CallArgs& args) {
  Bound b("abs", args, {});
  if (v.kind == Kind::Float) return Value::number(std::fabs(v.f));
  if (v.is_integral()) return Value::integer(std::llabs(v.as_int()));
  fail("bad operand type for abs(): '" + type_name(v) + "'");
}

Value do_escape(const Value& v, CallArgs& args) {
  Bound b("escape", args, {});
  return v.safe ? v : Value::string(html_escape(to_str(v)), true);
}

Value do_wordcount(const Value& v, CallArgs& args) {
  Bound b("wordcount", args, {});
  int64_t words = 0;
  bool in_word = false;
  for (char c : to_str(v)) {
    auto u = static_cast<unsigned char>(c);
    bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || u >= 0x80;
    if (word && !in_word) ++words;
    in_word = word;
  }
  return Value::integer(words);
}

Value min_or_max(const Value& v, CallArgs& args, bool max) {
  Bound b(max ? "max" : "min", args, {"case_sensitive", "attribute"});
  bool case_sensitive = b.given(0) && truthy(b[0]);
  List items = iterate(v);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  auto key = [&](const Value& e) { return sort_key(b.given(1) ? lookup_path(e, to_str(b[1])) : e, case_sensitive); };
  const Value* best = &items[0];
  for (auto& e : items)
    if (max ? less(key(*best), key(e)) : less(key(e), key(*best))) best = &e;
  return *best;
}

Value do_sum(const Value& v, CallArgs& args) {
  Bound b("sum", args, {"attribute", "start"});
  Value total = b.given(1) ? b[1] : Value::integer(0);
  for (auto& e : iterate(v)) total = binary_op("+", total, b.given(0) ? lookup_path(e, to_str(b[0])) : e);
  return total;
}

Value do_center(const Value& v, CallArgs& args) {
  Bound b("center", args, {"width"});
  std::string s = to_str(v);
  int64_t width = b.integer(0, 80), n = length(Value::string(s));
  if (width <= n) return Value::string(s);
  int64_t pad = width - n, left = pad / 2 + (pad & width & 1);  // str.center's split of the padding
  return Value::string(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

const Filter kFilters[] = {
    {"tojson", tojson},
    {"length", do_length},
    {"count", do_length},
    {"trim", do_trim},
    {"upper", [](const Value& v, CallArgs& a) { Bound b("upper", a, {}); return Value::string(ascii_upper(to_str(v))); }},
    {"lower", [](const Value& v, CallArgs& a) { Bound b("lower", a, {}); return Value::string(ascii_lower(to_str(v))); }},
    {"title", do_title},
    {"capitalize",
     [](const Value& v, CallArgs& a) { Bound b("capitalize", a, {}); return Value::string(capitalize(to_str(v))); }},
    {"replace",
     [](const Value& v, CallArgs& a) {
       Bound b("replace", a, {"old", "new", "count"});
       return Value::string(replace(to_str(v), b.string(0, ""), b.string(1, ""), b.integer(2, -1)));
     }},
    {"join", do_join},
    {"default", do_default},
    {"d", do_default},
    {"first", do_first},
    {"last", do_last},
    {"list", [](const Value& v, CallArgs& a) { Bound b("list", a, {}); return Value::make_list(iterate(v)); }},
    {"items", do_items},
    {"select", [](const Value& v, CallArgs& a) { return select_or_reject(v, a, true, false, "select"); }},
    {"reject", [](const Value& v, CallArgs& a) { return select_or_reject(v, a, false, false, "reject"); }},
    {"selectattr", [](const Value& v, CallArgs& a) { return select_or_reject(v, a, true, true, "selectattr"); }},
    {"rejectattr", [](const Value& v, CallArgs& a) { return select_or_reject(v, a, false, true, "rejectattr"); }},
    {"map", do_map},
    {"unique", do_unique},
    {"string", [](const Value& v, CallArgs& a) { Bound b("string", a, {}); return string_arg(v); }},
    {"int", do_int},
    {"float", do_float},
    {"indent", do_indent},
    {"dictsort", do_dictsort},
    {"sort", do_sort},
    {"reverse", do_reverse},
    {"round", do_round},
    {"abs", do_abs},
    {"safe", [](const Value& v, CallArgs& a) { Bound b("safe", a, {}); return Value::string(to_str(v), true); }},
    {"escape", do_escape},
    {"e", do_escape},
    {"wordcount", do_wordcount},
    {"min", [](const Value& v, CallArgs& a) { return min_or_max(v, a, false); }},
    {"max", [](const Value& v, CallArgs& a) { return min_or_max(v, a, true); }},
    {"sum", do_sum},
    {"center", do_center},
    {"attr",
     [](const Value& v, CallArgs& a) { Bound b("attr", a, {"name"}); return get_attribute(v, b.string(0, "")); }},
};

}  // namespace

bool filter_exists(std::string_view name) { return find_named(kFilters, name) != nullptr; }

Value apply_filter(std::string_view name, const Value& v, CallArgs& args) {
  return named_or_fail(kFilters, "filter", name)(v, args);
}

}  // namespace r1pi::jinja
