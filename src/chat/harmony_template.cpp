#include "chat/harmony_template.h"

#include <map>

#include "chat/tool_call_format.h"
#include "common/error.h"
#include "jinja/python_text.h"

namespace r1pi {

using nlohmann::ordered_json;

namespace {

// Python's json.dumps, as the template's tojson writes values (", " and ": " between items).
std::string tojson(const ordered_json& value) { return jinja::dumps(jinja::from_json(value), {}); }

std::string value_text(const ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : tojson(value);
}

bool is_type(const ordered_json& spec, std::string_view type) {
  return spec.is_object() && spec.contains("type") && spec["type"] == type;
}

bool truthy(const ordered_json& spec, const char* key) {
  return spec.is_object() && spec.contains(key) && !spec[key].is_null() && spec[key] != false &&
         !(spec[key].is_array() && spec[key].empty()) && !(spec[key].is_object() && spec[key].empty());
}

bool is_required(const ordered_json& parameters, const std::string& name) {
  if (!parameters.contains("required") || !parameters["required"].is_array()) return false;
  for (const ordered_json& r : parameters["required"])
    if (r == name) return true;
  return false;
}

// A parameter's JSON Schema as the template's TypeScript type: strings (enums as their literals),
// numbers, booleans, lists of them, objects with their properties, unions; "any" for the rest.
std::string typescript_type(const ordered_json& spec) {
  const std::string null = truthy(spec, "nullable") ? " | null" : "";
  if (is_type(spec, "array")) {
    if (!spec.contains("items")) return "any[]" + null;
    const ordered_json& items = spec["items"];
    for (const auto& [json_type, ts] : {std::pair{"string", "string"}, {"number", "number"}, {"integer", "number"},
                                        {"boolean", "boolean"}})
      if (is_type(items, json_type)) return std::string(ts) + "[]" + null;
    const std::string inner = typescript_type(items);
    return (inner == "object | object" || inner.size() > 50 ? "any" : inner) + "[]" + null;
  }
  if (spec.is_object() && spec.contains("type") && spec["type"].is_array() && !spec["type"].empty()) {
    std::string out;
    for (const ordered_json& t : spec["type"]) out += (out.empty() ? "" : " | ") + value_text(t);
    return out;
  }
  if (truthy(spec, "oneOf")) {
    // The template means to write "any" for a union with objects, but its flag is set inside a
    // loop, which Jinja scopes: every union is written out. Its whitespace as it renders: " | "
    // then a line break between the variants, a default after its own indentation.
    std::string out;
    for (const ordered_json& variant : spec["oneOf"]) {
      out += (out.empty() ? "" : " | \n") + typescript_type(variant);
      if (variant.is_object() && variant.contains("description") && variant["description"].is_string())
        out += "// " + variant["description"].get<std::string>();
      if (variant.is_object() && variant.contains("default"))
        out += std::string(20, ' ') + "// default: " + tojson(variant["default"]);
    }
    return out;
  }
  if (is_type(spec, "string")) {
    if (!truthy(spec, "enum")) return "string" + null;
    std::string out;
    for (const ordered_json& e : spec["enum"]) out += (out.empty() ? "\"" : "\" | \"") + value_text(e);
    return out + "\"";
  }
  if (is_type(spec, "number") || is_type(spec, "integer")) return "number";
  if (is_type(spec, "boolean")) return "boolean";
  if (is_type(spec, "object")) {
    if (!truthy(spec, "properties")) return "object";
    // The template writes a nested property's type after a line break and its own indentation
    // (16 spaces).
    std::string out = "{\n";
    bool first = true;
    for (const auto& [name, property] : spec["properties"].items()) {
      out += (first ? "" : ", ") + name + (is_required(spec, name) ? "" : "?") + ": \n                " +
             typescript_type(property);
      first = false;
    }
    return out + "}";
  }
  return "any";
}

const ordered_json& function_of(const ordered_json& tool) {
  return tool.is_object() && tool.contains("function") ? tool["function"] : tool;
}

// A call's analysis, the call to the function, as the template writes an earlier call (the
// recipient after the role, the content type without <|constrain|>).
std::string call_text(const ToolCall& call) {
  const ordered_json arguments = ordered_json::parse(call.arguments, nullptr, false);
  if (arguments.is_discarded())
    throw Error("tool call " + call.name + ": arguments are not JSON: " + call.arguments);
  return "<|start|>assistant to=functions." + call.name + "<|channel|>commentary json<|message|>" +
         tojson(arguments) + "<|call|>";
}

}  // namespace

std::string harmony_functions_namespace(const ordered_json& tools) {
  std::string out = "## functions\n\nnamespace functions {\n\n";
  for (const ordered_json& tool : tools) {
    tool_parameters(tool);  // throws for a tool without a name
    const ordered_json& f = function_of(tool);
    if (f.contains("description") && f["description"].is_string())
      out += "// " + f["description"].get<std::string>() + "\n";
    out += "type " + f["name"].get<std::string>() + " = ";
    const ordered_json parameters = f.contains("parameters") ? f["parameters"] : ordered_json();
    if (!truthy(parameters, "properties")) {
      out += "() => any;\n\n";
      continue;
    }
    out += "(_: {\n";
    for (const auto& [name, spec] : parameters["properties"].items()) {
      if (spec.is_object() && spec.contains("description") && spec["description"].is_string())
        out += "// " + spec["description"].get<std::string>() + "\n";
      out += name + (is_required(parameters, name) ? "" : "?") + ": " + typescript_type(spec);
      if (spec.is_object() && spec.contains("default")) {
        const ordered_json& d = spec["default"];
        if (truthy(spec, "enum")) out += ", // default: " + value_text(d);
        else if (truthy(spec, "oneOf")) out += "// default: " + value_text(d);
        else out += ", // default: " + tojson(d);
      }
      out += ",\n";
    }
    out += "}) => any;\n\n";
  }
  return out + "} // namespace functions";
}

std::string render_harmony(const std::vector<ChatMessage>& messages, std::string_view effort,
                           const ordered_json& tools) {
  const bool with_tools = tools.is_array() && !tools.empty();
  // Without the template's current date: the prompt stays a function of the request.
  std::string out = "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
                    "Knowledge cutoff: 2024-06\n\nReasoning: " +
                    std::string(effort.empty() ? "medium" : effort) +
                    "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.";
  if (with_tools) out += "\nCalls to these tools must go to the commentary channel: 'functions'.";
  out += "<|end|>";
  std::string instructions;
  for (const ChatMessage& m : messages)
    if (m.role == "system" || m.role == "developer") instructions = m.content;
  if (!instructions.empty() || with_tools) {
    out += "<|start|>developer<|message|>";
    if (!instructions.empty()) out += "# Instructions\n\n" + instructions + "\n\n";
    if (with_tools) out += "# Tools\n\n" + harmony_functions_namespace(tools);
    out += "<|end|>";
  }
  std::map<std::string, std::string> call_names;  // id -> function, for the results
  std::string last_call;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user") out += "<|start|>user<|message|>" + m.content + "<|end|>";
    if (m.role == "assistant" && m.tool_calls.empty()) {
      out += "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|end|>";
      last_call.clear();
    }
    if (m.role == "assistant" && !m.tool_calls.empty()) {
      // The reasoning before a call stays while no final answer has followed it.
      bool answered = false;
      for (size_t j = i + 1; j < messages.size(); ++j)
        answered = answered || (messages[j].role == "assistant" && messages[j].tool_calls.empty());
      const std::string& analysis = m.content.empty() ? m.reasoning_content : m.content;
      if (!answered && !analysis.empty())
        out += "<|start|>assistant<|channel|>analysis<|message|>" + analysis + "<|end|>";
      // The template writes a turn's first call; harmony writes each call as a message of its own.
      for (const ToolCall& call : m.tool_calls) {
        out += call_text(call);
        call_names[call.id] = last_call = call.name;
      }
    }
    if (m.role == "tool") {
      const auto named = call_names.find(m.tool_call_id);
      const std::string name = !m.name.empty() ? m.name : named != call_names.end() ? named->second : last_call;
      if (name.empty()) throw Error("a tool message with no assistant's tool call before it");
      out += "<|start|>functions." + name + " to=assistant<|channel|>commentary<|message|>" +
             tojson(ordered_json(m.content)) + "<|end|>";
    }
  }
  return out + "<|start|>assistant";
}

}  // namespace r1pi
