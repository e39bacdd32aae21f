#include "chat/tool_call_bodies.h"

#include <algorithm>
#include <cctype>

#include "chat/json_prefix.h"
#include "chat/tool_call_markers.h"

namespace r1pi {

using nlohmann::ordered_json;
using namespace tool_markers;

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_json_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_json_space(text.back())) text.remove_suffix(1);
  return text;
}

ordered_json parse_json(std::string_view text) { return ordered_json::parse(text, nullptr, false); }

// A function name as models write them: letters, digits, '_', '-', '.', nothing else.
bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

// Arguments as models give them: an object, a string holding one, or none at all.
std::optional<ordered_json> arguments_object(const ordered_json& value) {
  if (value.is_null()) return ordered_json::object();
  const ordered_json object = value.is_string() ? parse_json(value.get<std::string>()) : value;
  if (!object.is_object()) return std::nullopt;
  return object;
}

std::optional<ParsedCall> call_of(std::string_view name, const ordered_json& arguments) {
  std::optional<ordered_json> object = arguments_object(arguments);
  if (!valid_name(name) || !object) return std::nullopt;
  return ParsedCall{std::string(name), std::move(*object)};
}

// {"name": "f", "<arguments_key>": {...}}; OpenAI's {"type": "function", ...} and extra keys (an
// "id") are tolerated, a second arguments key is not a call.
std::optional<ParsedCall> call_of_object(const ordered_json& object) {
  if (!object.is_object() || !object.contains("name") || !object["name"].is_string()) return std::nullopt;
  if (object.contains("arguments") && object.contains("parameters")) return std::nullopt;
  const ordered_json none;
  const ordered_json& arguments = object.contains("arguments")    ? object["arguments"]
                                  : object.contains("parameters") ? object["parameters"]
                                                                  : none;
  return call_of(object["name"].get<std::string>(), arguments);
}

ParsedCalls calls_of_list(const ordered_json& list) {
  if (!list.is_array() || list.empty()) return std::nullopt;
  std::vector<ParsedCall> calls;
  for (const ordered_json& item : list) {
    std::optional<ParsedCall> call = call_of_object(item);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  return calls;
}

ParsedCalls one(std::optional<ParsedCall> call) {
  if (!call) return std::nullopt;
  return std::vector<ParsedCall>{std::move(*call)};
}

// Whether a function's parameter is declared a string, or not declared at all (its XML value is
// text, and text it stays unless the tools say otherwise).
bool declared_string(const ordered_json& tools, std::string_view function, const std::string& parameter) {
  if (!tools.is_array()) return true;
  for (const ordered_json& tool : tools) {
    const ordered_json& f = tool.contains("function") ? tool["function"] : tool;
    if (!f.is_object() || f.value("name", "") != function) continue;
    const ordered_json properties = f.contains("parameters") ? f["parameters"].value("properties", ordered_json())
                                                             : ordered_json();
    if (!properties.is_object() || !properties.contains(parameter)) return true;
    return xml_value_is_text(properties[parameter]);
  }
  return true;
}

}  // namespace

bool xml_value_is_text(const ordered_json& parameter_schema) {
  const ordered_json type = parameter_schema.is_object() ? parameter_schema.value("type", ordered_json()) : ordered_json();
  if (type.is_string()) return type == "string";
  if (type.is_array()) return std::find(type.begin(), type.end(), "string") != type.end();
  return true;
}

namespace {

// <function=f>\n(<parameter=x>\nvalue\n</parameter>\n)*</function>
ParsedCalls parse_xml_function(std::string_view text, const ordered_json& tools) {
  text = trim(text);
  if (!text.starts_with(kFunctionOpen) || !text.ends_with(kFunctionClose)) return std::nullopt;
  text.remove_suffix(kFunctionClose.size());
  const size_t name_end = text.find('>');
  if (name_end == std::string_view::npos) return std::nullopt;
  const std::string_view name = text.substr(kFunctionOpen.size(), name_end - kFunctionOpen.size());
  std::string_view rest = trim(text.substr(name_end + 1));
  ordered_json arguments = ordered_json::object();
  while (!rest.empty()) {
    if (!rest.starts_with(kParameterOpen)) return std::nullopt;
    const size_t key_end = rest.find('>');
    const size_t value_end = rest.find(kParameterClose);
    if (key_end == std::string_view::npos || value_end == std::string_view::npos || value_end < key_end)
      return std::nullopt;
    const std::string key(rest.substr(kParameterOpen.size(), key_end - kParameterOpen.size()));
    std::string_view value = rest.substr(key_end + 1, value_end - key_end - 1);
    if (value.starts_with('\n')) value.remove_prefix(1);  // the template's own line breaks
    if (value.ends_with('\n')) value.remove_suffix(1);
    const bool as_string = declared_string(tools, name, key);
    const ordered_json parsed = as_string ? ordered_json() : parse_json(value);
    arguments[key] = as_string || parsed.is_discarded() ? ordered_json(std::string(value)) : parsed;
    rest = trim(rest.substr(value_end + kParameterClose.size()));
  }
  return one(call_of(name, arguments));
}

// Python's f.call(x="a", y=2): keyword arguments whose values are JSON literals.
ParsedCalls parse_builtin_call(std::string_view text) {
  const size_t dot = text.find(".call(");
  if (dot == std::string_view::npos || !text.ends_with(')')) return std::nullopt;
  const std::string_view name = text.substr(0, dot);
  std::string_view rest = text.substr(dot + 6, text.size() - dot - 7);
  ordered_json arguments = ordered_json::object();
  while (!trim(rest).empty()) {
    const size_t equals = rest.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string key(trim(rest.substr(0, equals)));
    rest = trim(rest.substr(equals + 1));
    // The value runs to the next comma outside a string.
    size_t end = 0;
    for (bool in_string = false; end < rest.size() && (in_string || rest[end] != ','); ++end) {
      if (in_string && rest[end] == '\\') ++end;
      else if (rest[end] == '"') in_string = !in_string;
    }
    const ordered_json value = parse_json(rest.substr(0, std::min(end, rest.size())));
    if (value.is_discarded() || !valid_name(key)) return std::nullopt;
    arguments[key] = value;
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view();
  }
  return one(call_of(name, arguments));
}

}  // namespace

ParsedCalls parse_tool_call_block(std::string_view body, const ordered_json& tools) {
  body = trim(body);
  if (body.starts_with(kFunctionOpen)) return parse_xml_function(body, tools);
  return one(call_of_object(parse_json(body)));
}

ParsedCalls parse_deepseek_call(std::string_view body) {
  const size_t sep = body.find(kCallSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view before = trim(body.substr(0, sep)), after = trim(body.substr(sep + kCallSep.size()));
  if (!after.ends_with(kFence)) return parse_named_call(before, after);
  // R1: the call's type before the separator, then the name, then the fenced arguments.
  const size_t fence = after.find(kFence);
  if (fence + kFence.size() == after.size()) return std::nullopt;  // the closing fence alone
  std::string_view arguments = after.substr(fence, after.size() - fence - kFence.size());
  arguments.remove_prefix(arguments.starts_with(kJsonFence) ? kJsonFence.size() : kFence.size());
  return before == "function" ? parse_named_call(trim(after.substr(0, fence)), arguments) : std::nullopt;
}

ParsedCalls parse_call_list(std::string_view json_text) { return calls_of_list(parse_json(json_text)); }

ParsedCalls parse_llama_call(std::string_view text) {
  text = trim(text);
  if (text.starts_with(kPythonTag)) text = trim(text.substr(kPythonTag.size()));
  if (!text.starts_with('{')) return parse_builtin_call(text);
  const ordered_json object = parse_json(text);
  if (object.is_object() && object.contains("type") && object["type"] != "function") return std::nullopt;
  return one(call_of_object(object));
}

ParsedCalls parse_generic_calls(std::string_view json_text) {
  const ordered_json object = parse_json(json_text);
  if (!object.is_object() || object.size() != 1) return std::nullopt;
  if (object.contains("tool_call")) return one(call_of_object(object["tool_call"]));
  if (object.contains("tool_calls")) return calls_of_list(object["tool_calls"]);
  return std::nullopt;
}

ParsedCalls parse_named_call(std::string_view name, std::string_view arguments_json) {
  const ordered_json arguments = parse_json(trim(arguments_json));
  if (!arguments.is_object()) return std::nullopt;
  return one(call_of(trim(name), arguments));
}

}  // namespace r1pi
