#include "grammar/json_schema_grammar.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "common/error.h"
#include "grammar/char_set.h"
#include "grammar/gbnf_parser.h"
#include "grammar/gbnf_text.h"
#include "grammar/integer_range.h"
#include "grammar/json_gbnf_rules.h"
#include "grammar/other_key_rule.h"
#include "grammar/schema_keywords.h"
#include "grammar/schema_pattern.h"
#include "grammar/text_scan.h"

namespace r1pi {
namespace {

using json = nlohmann::ordered_json;

// allOf and $ref chains resolved while merging stop here (a reference cycle through allOf).
constexpr int kMaxMergeDepth = 64;

const char* const kTypes[] = {"null", "boolean", "object", "array", "string", "integer", "number"};

std::string where(const std::string& path) { return path.empty() ? "the root" : path; }

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::string rule_hint(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    out += ok ? c : '-';
  }
  return out.empty() ? "x" : out;
}

bool is_annotation(const std::string& key) {
  const SchemaKeyword* k = find_schema_keyword(key);
  return k && k->role == KeywordRole::Annotation;
}

bool json_has_type(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return v.is_number();  // number
}

class SchemaConverter {
 public:
  explicit SchemaConverter(const json& root) : root_(root) {
    for (const std::string& name : json_rule_names()) taken_.insert(name);
    taken_.insert("root");
  }

  std::string convert() {
    const std::string top = visit(root_, "", "root");
    std::string out = "root ::= " + top + "\n";
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  const json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;  // in creation order
  std::map<std::string, std::string> rule_of_body_;         // identical bodies share a rule
  std::set<std::string> taken_;
  std::set<std::string> used_;                              // json_gbnf_rules.h rules copied in
  std::map<std::string, std::string> ref_rules_;            // JSON pointer -> rule name

  // A rule of the fixed table (and the ones it names), copied in once.
  std::string use(const std::string& name) {
    if (used_.insert(name).second) {
      const JsonRule* r = find_json_rule(name);
      rules_.push_back({name, std::string(r->body)});
      for (const std::string& dep : json_rule_references(r->body)) use(dep);
    }
    return name;
  }

  std::string fresh_name(const std::string& hint) {
    std::string name = rule_hint(hint);
    for (int n = 1; taken_.count(name); ++n) name = rule_hint(hint) + "-" + std::to_string(n);
    taken_.insert(name);
    return name;
  }

  std::string rule(const std::string& hint, const std::string& body) {
    if (auto it = rule_of_body_.find(body); it != rule_of_body_.end()) return it->second;
    const std::string name = fresh_name(hint);
    rules_.push_back({name, body});
    rule_of_body_.emplace(body, name);
    return name;
  }

  // A rule for a longer expression, the expression itself when it is empty or one name.
  std::string ref(const std::string& hint, const std::string& expression) {
    return expression.empty() || expression.find_first_of(" ()|") == std::string::npos ? expression : rule(hint, expression);
  }

  void check_keywords(const json& s, const std::string& path) {
    for (const auto& [key, value] : s.items())
      if (!find_schema_keyword(key))
        throw Error("json_schema: unsupported keyword '" + key + "' at " + where(path));
  }

  // The rule name of a schema.
  std::string visit(const json& s, const std::string& path, const std::string& hint) {
    if (s.is_boolean()) {
      if (s.get<bool>()) return use("value");
      throw Error("json_schema: the schema false at " + where(path) + " allows no value");
    }
    if (!s.is_object()) throw Error("json_schema: a schema must be an object or a boolean at " + where(path));
    check_keywords(s, path);
    if (s.contains("$ref")) return visit_ref(s, path, hint);
    if (s.contains("allOf")) return visit(merge_all_of(s, path, 0), path, hint);
    if (s.contains("anyOf") || s.contains("oneOf")) return visit_any_of(s, path, hint);
    if (s.contains("enum") || s.contains("const")) return visit_literals(s, path, hint);
    const std::vector<std::string> types = types_of(s, path);
    if (types.empty()) return use("value");
    if (types.size() == 1) return visit_typed(s, types[0], path, hint);
    std::string body;
    for (const std::string& t : types) body += (body.empty() ? "" : " | ") + visit_typed(s, t, path, hint + "-" + t);
    return rule(hint, body);
  }

  std::vector<std::string> types_of(const json& s, const std::string& path) {
    std::vector<std::string> types;
    auto add = [&](const json& t) {
      if (!t.is_string()) throw Error("json_schema: 'type' at " + where(path) + " must be a string or a list of strings");
      const std::string name = t.get<std::string>();
      bool known = false;
      for (const char* k : kTypes) known = known || name == k;
      if (!known) throw Error("json_schema: unknown type '" + name + "' at " + where(path));
      if (std::find(types.begin(), types.end(), name) == types.end()) types.push_back(name);
    };
    if (s.contains("type")) {
      if (s["type"].is_array()) {
        for (const json& t : s["type"]) add(t);
        if (types.empty()) throw Error("json_schema: empty 'type' list at " + where(path));
      } else {
        add(s["type"]);
      }
      return types;
    }
    // No type: the types whose keywords are present (none: any value).
    for (const auto& [key, value] : s.items()) {
      const SchemaKeyword* k = find_schema_keyword(key);
      if (k->role == KeywordRole::Typed) add(json(std::string(k->type)));
    }
    return types;
  }

  std::string visit_ref(const json& s, const std::string& path, const std::string& hint) {
    for (const auto& [key, value] : s.items())
      if (key != "$ref" && key != "$defs" && key != "definitions" && !is_annotation(key))
        throw Error("json_schema: keyword '" + key + "' beside $ref at " + where(path) + " is not supported");
    const auto [pointer, target] = resolve(s["$ref"], path);
    if (auto it = ref_rules_.find(pointer); it != ref_rules_.end()) return it->second;
    // Named before its body is built, so that a recursive reference finds it.
    const std::string name = fresh_name(hint == "root" ? "ref" : hint);
    ref_rules_.emplace(pointer, name);
    const size_t slot = rules_.size();
    rules_.push_back({name, ""});
    const std::string body = visit(*target, pointer, name + "-value");
    rules_[slot].second = body;
    return name;
  }

  std::pair<std::string, const json*> resolve(const json& ref, const std::string& path) {
    if (!ref.is_string()) throw Error("json_schema: $ref at " + where(path) + " must be a string");
    const std::string text = ref.get<std::string>();
    if (text.empty() || text[0] != '#')
      throw Error("json_schema: $ref '" + text + "' at " + where(path) +
                  ": only references into the schema itself (#/...) are supported");
    const std::string pointer = text.substr(1);
    try {
      const json::json_pointer p(pointer);
      if (!root_.contains(p)) throw Error("json_schema: $ref '" + text + "' at " + where(path) + ": no such definition");
      return {pointer, &root_.at(p)};
    } catch (const json::exception&) {
      throw Error("json_schema: $ref '" + text + "' at " + where(path) + ": not a JSON pointer");
    }
  }

  // allOf as one schema: the components' keywords together (properties merged, required joined);
  // any other keyword two components both give must be equal.
  json merge_all_of(const json& s, const std::string& path, int depth) {
    if (depth > kMaxMergeDepth) throw Error("json_schema: allOf at " + where(path) + " refers to itself");
    json merged = json::object();
    auto add = [&](const json& part, const std::string& part_path, auto& self) -> void {
      if (!part.is_object()) throw Error("json_schema: allOf at " + where(part_path) + " needs object schemas");
      check_keywords(part, part_path);
      if (part.contains("$ref")) {
        const auto [pointer, target] = resolve(part["$ref"], part_path);
        self(*target, pointer, self);
      }
      for (const auto& [key, value] : part.items()) {
        if (is_annotation(key) || key == "$ref" || key == "$defs" || key == "definitions") continue;
        if (key == "allOf") {
          if (!value.is_array()) throw Error("json_schema: allOf at " + where(part_path) + " must be a list");
          for (size_t i = 0; i < value.size(); ++i) {
            if (depth + 1 > kMaxMergeDepth) throw Error("json_schema: allOf at " + where(path) + " refers to itself");
            ++depth;
            self(value[i], part_path + "/allOf/" + std::to_string(i), self);
            --depth;
          }
        } else if (key == "properties" && merged.contains(key)) {
          for (const auto& [name, schema] : value.items()) {
            if (merged[key].contains(name) && merged[key][name] != schema)
              throw Error("json_schema: allOf at " + where(path) + " gives property '" + name +
                          "' two schemas (only a plain merge is supported)");
            merged[key][name] = schema;
          }
        } else if (key == "required" && merged.contains(key)) {
          for (const json& name : value)
            if (std::find(merged[key].begin(), merged[key].end(), name) == merged[key].end()) merged[key].push_back(name);
        } else if (merged.contains(key) && merged[key] != value) {
          throw Error("json_schema: allOf at " + where(path) + " merges two different '" + key +
                      "' (only a plain merge is supported)");
        } else {
          merged[key] = value;
        }
      }
    };
    add(s, path, add);
    return merged;
  }

  // anyOf / oneOf: one alternative per branch; keywords beside it apply to every branch.
  std::string visit_any_of(const json& s, const std::string& path, const std::string& hint) {
    if (s.contains("anyOf") && s.contains("oneOf"))
      throw Error("json_schema: anyOf beside oneOf at " + where(path) + " is not supported");
    const std::string key = s.contains("anyOf") ? "anyOf" : "oneOf";
    const json& branches = s[key];
    if (!branches.is_array() || branches.empty())
      throw Error("json_schema: " + key + " at " + where(path) + " must be a non-empty list");
    json siblings = json::object();
    for (const auto& [k, value] : s.items())
      if (k != key && k != "$defs" && k != "definitions" && !is_annotation(k)) siblings[k] = value;
    std::string body;
    for (size_t i = 0; i < branches.size(); ++i) {
      const std::string branch_path = path + "/" + key + "/" + std::to_string(i);
      std::string name;
      if (siblings.empty()) {
        name = visit(branches[i], branch_path, hint + "-" + std::to_string(i));
      } else {
        json combined = siblings;
        combined["allOf"] = json::array({branches[i]});
        name = visit(combined, branch_path, hint + "-" + std::to_string(i));
      }
      body += (i ? " | " : "") + name;
    }
    return rule(hint, body);
  }

  std::string visit_literals(const json& s, const std::string& path, const std::string& hint) {
    if (s.contains("enum") && s.contains("const"))
      throw Error("json_schema: enum beside const at " + where(path) + " is not supported");
    const std::string key = s.contains("enum") ? "enum" : "const";
    for (const auto& [k, value] : s.items())
      if (k != key && k != "type" && k != "$defs" && k != "definitions" && !is_annotation(k))
        throw Error("json_schema: keyword '" + k + "' beside " + key + " at " + where(path) + " is not supported");
    const json values = key == "const" ? json::array({s[key]}) : s[key];
    if (!values.is_array()) throw Error("json_schema: enum at " + where(path) + " must be a list");
    const std::vector<std::string> types = s.contains("type") ? types_of(s, path) : std::vector<std::string>{};
    std::string body;
    for (const json& v : values) {
      bool typed = types.empty();
      for (const std::string& t : types) typed = typed || json_has_type(v, t);
      if (typed) body += (body.empty() ? "" : " | ") + gbnf_literal(v.dump());
    }
    if (body.empty()) throw Error("json_schema: no " + key + " value at " + where(path) + " has the schema's type");
    return rule(hint, "(" + body + ") " + use("ws"));
  }

  std::string visit_typed(const json& s, const std::string& type, const std::string& path, const std::string& hint) {
    if (type == "null" || type == "boolean") return use(type);
    if (type == "integer") return visit_integer(s, path, hint);
    if (type == "number") {
      for (const char* bound : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
        if (s.contains(bound))
          throw Error(std::string("json_schema: '") + bound + "' on a number at " + where(path) +
                      " is not supported (only on an integer)");
      return use("number");
    }
    if (type == "string") return visit_string(s, path, hint);
    if (type == "object") return visit_object(s, path, hint);
    return visit_array(s, path, hint);
  }

  static std::optional<double> number_at(const json& s, const char* key, const std::string& path) {
    if (!s.contains(key)) return std::nullopt;
    if (!s[key].is_number()) throw Error(std::string("json_schema: '") + key + "' at " + where(path) + " must be a number");
    return s[key].get<double>();
  }

  static std::optional<size_t> count_at(const json& s, const char* key, const std::string& path) {
    if (!s.contains(key)) return std::nullopt;
    if (!s[key].is_number_unsigned())
      throw Error(std::string("json_schema: '") + key + "' at " + where(path) + " must be a non-negative integer");
    return s[key].get<size_t>();
  }

  std::string visit_integer(const json& s, const std::string& path, const std::string& hint) {
    auto clamp = [](double v) { return int64_t(std::clamp(v, -1e17, 1e17)); };
    std::optional<int64_t> lo, hi;
    auto raise_lo = [&](int64_t v) { lo = lo ? std::max(*lo, v) : v; };
    auto lower_hi = [&](int64_t v) { hi = hi ? std::min(*hi, v) : v; };
    if (auto v = number_at(s, "minimum", path)) raise_lo(clamp(std::ceil(*v)));
    if (auto v = number_at(s, "exclusiveMinimum", path)) raise_lo(clamp(std::floor(*v)) + 1);
    if (auto v = number_at(s, "maximum", path)) lower_hi(clamp(std::floor(*v)));
    if (auto v = number_at(s, "exclusiveMaximum", path)) lower_hi(clamp(std::ceil(*v)) - 1);
    if (!lo && !hi) return use("integer");
    if (lo && hi && *lo > *hi) throw Error("json_schema: no integer fits the bounds at " + where(path));
    return rule(hint, "(" + integer_range_gbnf(lo, hi) + ") " + use("ws"));
  }

  std::string visit_string(const json& s, const std::string& path, const std::string& hint) {
    const std::optional<size_t> min = count_at(s, "minLength", path), max = count_at(s, "maxLength", path);
    const bool lengths = min || max;
    for (const char* key : {"format", "pattern"})
      if (s.contains(key) && !s[key].is_string())
        throw Error(std::string("json_schema: '") + key + "' at " + where(path) + " must be a string");
    const char* const quote = R"("\"")";
    if (s.contains("format")) {
      if (s.contains("pattern") || lengths)
        throw Error("json_schema: 'format' beside '" + std::string(s.contains("pattern") ? "pattern" : "minLength/maxLength") +
                    "' at " + where(path) + " is not supported");
      const std::string format = s["format"].get<std::string>();
      const JsonRule* r = find_json_format(format);
      if (!r) throw Error("json_schema: unsupported format '" + format + "' at " + where(path));
      return rule(hint, std::string(quote) + " " + use(std::string(r->name)) + " " + quote + " " + use("ws"));
    }
    if (s.contains("pattern")) {
      if (lengths) throw Error("json_schema: 'pattern' beside 'minLength/maxLength' at " + where(path) + " is not supported");
      const std::string content = pattern_gbnf(s["pattern"].get<std::string>(), path + "/pattern", use("char"));
      return rule(hint, std::string(quote) + " " + content + " " + quote + " " + use("ws"));
    }
    if (!lengths) return use("string");
    if (max && min && *max < *min) throw Error("json_schema: maxLength below minLength at " + where(path));
    const std::string count = "{" + std::to_string(min.value_or(0)) + "," + (max ? std::to_string(*max) : "") + "}";
    return rule(hint, std::string(quote) + " " + use("char") + count + " " + quote + " " + use("ws"));
  }

  std::string other_key(const std::vector<std::string>& names, const std::string& hint) {
    return other_key_rule(
        names, hint, [this](const std::string& name) { return use(name); },
        [this](const std::string& h, const std::string& b) { return rule(h, b); });
  }

  std::string visit_object(const json& s, const std::string& path, const std::string& hint) {
    const json properties = s.value("properties", json::object());
    if (!properties.is_object()) throw Error("json_schema: 'properties' at " + where(path) + " must be an object");
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) throw Error("json_schema: 'required' at " + where(path) + " must be a list");
      for (const json& name : s["required"]) {
        if (!name.is_string()) throw Error("json_schema: 'required' at " + where(path) + " must list strings");
        if (!properties.contains(name.get<std::string>()))
          throw Error("json_schema: required property '" + name.get<std::string>() + "' at " + where(path) +
                      " is not in 'properties'");
        required.insert(name.get<std::string>());
      }
    }
    const std::string ws = use("ws");
    std::vector<std::string> names, pairs;
    for (const auto& [name, schema] : properties.items()) {
      const std::string value = visit(schema, path + "/properties/" + pointer_token(name), hint + "-" + name);
      names.push_back(name);
      pairs.push_back(rule(hint + "-" + name + "-kv", gbnf_literal(json(name).dump()) + " " + ws + " \":\" " + ws + " " + value));
    }
    // Extra properties after the named ones.
    std::string extra;
    const json additional = s.contains("additionalProperties") ? s["additionalProperties"] : json(properties.empty());
    if (!additional.is_boolean() || additional.get<bool>()) {
      const std::string value = additional.is_boolean() ? use("value")
                                                        : visit(additional, path + "/additionalProperties", hint + "-extra");
      const std::string key = names.empty() ? use("string") : other_key(names, hint + "-other-key");
      extra = rule(hint + "-extra-kv", key + " \":\" " + ws + " " + value);
    }
    // Commas: after[i] follows something already written, start[i] nothing yet. Each is text,
    // made a rule of its own only where two places use it.
    std::string after = extra.empty() ? "" : "(\",\" " + ws + " " + extra + ")*";
    std::string start = extra.empty() ? "" : "(" + extra + " " + ref(hint + "-rest", after) + ")?";
    for (size_t i = names.size(); i-- > 0;) {
      const std::string kv = pairs[i];
      const std::string rest = ref(hint + "-after", after);
      if (required.count(names[i])) {
        after = "\",\" " + ws + " " + kv + " " + rest;
        start = kv + " " + rest;
      } else {
        after = "(\",\" " + ws + " " + kv + ")? " + rest;
        start = start.empty() ? "(" + kv + " " + rest + ")?" : "(" + kv + " " + rest + " | " + ref(hint + "-start", start) + ")";
      }
    }
    return rule(hint, "\"{\" " + ws + " " + start + " \"}\" " + ws);
  }

  std::string visit_array(const json& s, const std::string& path, const std::string& hint) {
    const std::string ws = use("ws");
    std::vector<std::string> prefix;
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) throw Error("json_schema: 'prefixItems' at " + where(path) + " must be a list");
      for (size_t i = 0; i < s["prefixItems"].size(); ++i)
        prefix.push_back(visit(s["prefixItems"][i], path + "/prefixItems/" + std::to_string(i), hint + "-" + std::to_string(i)));
    }
    std::string item;  // "": no items after the prefix
    if (s.contains("items")) {
      const json& items = s["items"];
      if (!items.is_boolean() || items.get<bool>()) item = visit(items, path + "/items", hint + "-item");
    } else if (prefix.empty()) {
      item = use("value");
    }
    const size_t min = count_at(s, "minItems", path).value_or(0);
    const std::optional<size_t> max = count_at(s, "maxItems", path);
    const size_t k = prefix.size();
    if (max && *max < min) throw Error("json_schema: maxItems below minItems at " + where(path));
    if (max && *max < k) throw Error("json_schema: maxItems below the number of prefixItems at " + where(path));
    const size_t lo = min > k ? min - k : 0;
    if (item.empty() && lo > 0)
      throw Error("json_schema: minItems above the number of prefixItems, with no more items allowed, at " + where(path));
    const std::optional<size_t> hi = item.empty() ? std::optional<size_t>(0) : max ? std::optional<size_t>(*max - k) : std::nullopt;
    auto count = [](size_t a, std::optional<size_t> b) {
      return "{" + std::to_string(a) + "," + (b ? std::to_string(*b) : "") + "}";
    };
    const std::string more = "\",\" " + ws + " " + item;
    std::string body = "\"[\" " + ws;
    if (k > 0) {
      for (size_t i = 0; i < k; ++i) body += (i ? " \",\" " + ws + " " : " ") + prefix[i];
      if (!hi || *hi > 0) body += " (" + more + ")" + count(lo, hi);
    } else if (hi && *hi == 0) {
      // nothing: "[]"
    } else if (lo == 0) {
      body += " (" + item + " (" + more + ")" + count(0, hi ? std::optional<size_t>(*hi - 1) : std::nullopt) + ")?";
    } else {
      body += " " + item + " (" + more + ")" + count(lo - 1, hi ? std::optional<size_t>(*hi - 1) : std::nullopt);
    }
    return rule(hint, body + " \"]\" " + ws);
  }
};

}  // namespace

std::string json_schema_to_gbnf(const json& schema) { return SchemaConverter(schema).convert(); }

std::shared_ptr<const Grammar> json_schema_grammar(const json& schema) {
  return parse_gbnf(json_schema_to_gbnf(schema));
}

std::shared_ptr<const Grammar> json_object_grammar() {
  static const std::shared_ptr<const Grammar> grammar = json_schema_grammar(json{{"type", "object"}});
  return grammar;
}

}  // namespace r1pi
