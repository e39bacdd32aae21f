#include "chat/tool_call_format.h"

#include <array>
#include <cctype>
#include <random>

#include "chat/tool_call_markers.h"
#include "common/error.h"

namespace r1pi {

using nlohmann::ordered_json;
using namespace tool_markers;

namespace {

constexpr ToolCallFormat kFormats[] = {
    {"generic", ToolCallSyntax::Generic, "", false},
    {"hermes", ToolCallSyntax::Hermes, "", false},
    {"qwen3-coder", ToolCallSyntax::QwenXml, "", false},
    {"llama3", ToolCallSyntax::Llama3, "", false},
    {"deepseek-v3.1", ToolCallSyntax::DeepSeekV3, "", false},
    {"deepseek-r1", ToolCallSyntax::DeepSeekR1, "", false},
    {"mistral-nemo", ToolCallSyntax::JsonList, kMistralCalls, true},
    {"granite", ToolCallSyntax::JsonList, kGraniteCall, false},
    {"mistral-small-3.2", ToolCallSyntax::MistralArgs, "", true},
    {"harmony", ToolCallSyntax::Harmony, "", false},
};

// Detection: the first row whose markers all appear in the template (and, where asked, whose
// template lists the tools) names the format; no row: generic.
struct DetectionRow {
  std::string_view format;
  std::array<std::string_view, 2> markers;  // "" matches anything
  bool needs_tools_in_template;
};
constexpr DetectionRow kDetection[] = {
    {"harmony", {"<|channel|>", kHarmonyCallEnd}, false},
    {"qwen3-coder", {kToolCallOpen, kFunctionOpen}, false},
    {"hermes", {kToolCallOpen, ""}, false},
    // llama.cpp's fixed R1 template lists the tools and teaches R1's syntax. The R1 distills'
    // templates only render earlier calls in it, and the distills never learnt to call: generic.
    {"deepseek-r1", {kCallSep, kJsonFence}, true},
    {"generic", {kCallSep, kJsonFence}, false},
    {"deepseek-v3.1", {kCallSep, ""}, false},
    {"mistral-small-3.2", {kMistralCalls, kMistralArgs}, false},
    {"mistral-nemo", {kMistralCalls, ""}, false},
    {"granite", {kGraniteCall, ""}, false},
    {"llama3", {"<|start_header_id|>", "\"parameters\""}, false},
};

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the template reads the `tools` variable (the word, not "builtin_tools" or "tool_calls").
bool references_tools(std::string_view text) {
  for (size_t at = text.find("tools"); at != std::string_view::npos; at = text.find("tools", at + 1)) {
    const bool starts = at == 0 || !is_identifier_char(text[at - 1]);
    const bool ends = at + 5 == text.size() || !is_identifier_char(text[at + 5]);
    if (starts && ends) return true;
  }
  return false;
}

// The key the call object holds the arguments under; "" where the arguments are the whole JSON
// value and the name is literal text before them.
std::string_view arguments_key(ToolCallSyntax syntax) {
  switch (syntax) {
    case ToolCallSyntax::Generic:
    case ToolCallSyntax::Hermes:
    case ToolCallSyntax::JsonList: return "arguments";
    case ToolCallSyntax::Llama3: return "parameters";
    default: return "";
  }
}

std::string concat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out += part;
  return out;
}

std::string call_open(const ToolCallFormat& format, const std::string& name) {
  switch (format.syntax) {
    case ToolCallSyntax::Hermes: return concat({kToolCallOpen, "\n"});
    case ToolCallSyntax::QwenXml: return concat({kToolCallOpen, "\n", kFunctionOpen, name, ">\n"});
    case ToolCallSyntax::DeepSeekV3: return concat({kCallBegin, name, kCallSep});
    case ToolCallSyntax::DeepSeekR1: return concat({kCallBegin, "function", kCallSep, name, "\n", kJsonFence, "\n"});
    case ToolCallSyntax::MistralArgs: return concat({kMistralCalls, name, kMistralArgs});
    case ToolCallSyntax::Harmony: return concat({kHarmonyCall, name, kHarmonyMessage});
    default: return "";
  }
}

std::string call_close(const ToolCallFormat& format) {
  switch (format.syntax) {
    case ToolCallSyntax::Hermes: return concat({"\n", kToolCallClose});
    case ToolCallSyntax::QwenXml: return concat({kFunctionClose, "\n", kToolCallClose});
    case ToolCallSyntax::DeepSeekV3: return std::string(kCallEnd);
    case ToolCallSyntax::DeepSeekR1: return concat({"\n", kFence, kCallEnd});
    case ToolCallSyntax::Harmony: return std::string(kHarmonyCallEnd);
    default: return "";
  }
}

const ordered_json& function_of(const ordered_json& tool) {
  const ordered_json& function = tool.is_object() && tool.contains("function") ? tool["function"] : tool;
  if (!function.is_object() || !function.contains("name") || !function["name"].is_string() ||
      function["name"].get<std::string>().empty())
    throw Error("tools: a tool has no function name: " + tool.dump());
  return function;
}

ordered_json parameters_of(const ordered_json& function) {
  if (function.contains("parameters") && function["parameters"].is_object()) return function["parameters"];
  return {{"type", "object"}, {"properties", ordered_json::object()}};
}

// QwenXml's body: one block per argument, strings as they are, other values as JSON.
std::string xml_parameters(const ordered_json& arguments) {
  std::string out;
  for (const auto& [key, value] : arguments.items())
    out += concat({kParameterOpen, key, ">\n", value.is_string() ? value.get<std::string>() : value.dump(), "\n",
                   kParameterClose, "\n"});
  return out;
}

}  // namespace

ToolCallFormat tool_call_format_named(std::string_view name) {
  for (const ToolCallFormat& format : kFormats)
    if (format.name == name) return format;
  throw Error("unknown tool call format '" + std::string(name) + "' (known: " + tool_call_format_names() + ")");
}

std::string tool_call_format_names() {
  std::string names;
  for (const ToolCallFormat& format : kFormats) names += (names.empty() ? "" : ", ") + std::string(format.name);
  return names;
}

ToolCallFormat detect_tool_call_format(std::string_view chat_template) {
  const bool renders_tools = references_tools(chat_template);
  for (const DetectionRow& row : kDetection) {
    bool all = !row.needs_tools_in_template || renders_tools;
    for (std::string_view marker : row.markers) all = all && chat_template.find(marker) != std::string_view::npos;
    if (!all) continue;
    ToolCallFormat format = tool_call_format_named(row.format);
    format.renders_tools = format.syntax != ToolCallSyntax::Generic && renders_tools;
    return format;
  }
  return tool_call_format_named("generic");
}

std::string new_tool_call_id(const ToolCallFormat& format) {
  static constexpr std::string_view kAlphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, kAlphanumerics.size() - 1);
  std::string id = format.short_ids ? "" : "call_";
  for (int i = 0; i < (format.short_ids ? 9 : 24); ++i) id += kAlphanumerics[pick(random)];
  return id;
}

ToolCallLayout tool_call_layout(const ToolCallFormat& format, bool parallel) {
  switch (format.syntax) {
    case ToolCallSyntax::Generic:
      return parallel ? ToolCallLayout{"{\"tool_calls\": [", ", ", "]}", true}
                      : ToolCallLayout{"{\"tool_call\": ", "", "}", false};
    case ToolCallSyntax::Hermes:
    case ToolCallSyntax::QwenXml: return {"", "\n", "", parallel};
    case ToolCallSyntax::Llama3: return {"", "", "", false};  // its templates refuse a second call
    case ToolCallSyntax::DeepSeekV3: return {std::string(kCallsBegin), "", std::string(kCallsEnd), parallel};
    case ToolCallSyntax::DeepSeekR1: return {std::string(kCallsBegin), "\n", std::string(kCallsEnd), parallel};
    case ToolCallSyntax::JsonList: return {concat({format.list_marker, "["}), ", ", "]", parallel};
    case ToolCallSyntax::MistralArgs: return {"", "", "", parallel};
    case ToolCallSyntax::Harmony: return {"", "", "", false};  // <|call|> ends the turn
  }
  return {"", "", "", parallel};
}

ToolCallShape tool_call_shape(const ToolCallFormat& format, const ordered_json& tool) {
  const ordered_json& function = function_of(tool);
  const std::string name = function["name"];
  ToolCallShape shape{call_open(format, name), call_close(format), nullptr};
  if (format.syntax == ToolCallSyntax::QwenXml) return shape;
  const std::string_view key = arguments_key(format.syntax);
  if (key.empty()) {
    shape.schema = parameters_of(function);
    return shape;
  }
  shape.schema = {{"type", "object"},
                  {"properties", {{"name", {{"const", name}}}, {std::string(key), parameters_of(function)}}},
                  {"required", {"name", std::string(key)}},
                  {"additionalProperties", false}};
  return shape;
}

ordered_json tool_parameters(const ordered_json& tool) { return parameters_of(function_of(tool)); }

ordered_json generic_response_schema() {
  return {{"type", "object"},
          {"properties", {{"response", {{"type", "string"}}}}},
          {"required", {"response"}},
          {"additionalProperties", false}};
}

std::string render_tool_calls(const ToolCallFormat& format, const std::vector<ToolCall>& calls, bool parallel) {
  const ToolCallLayout layout = tool_call_layout(format, parallel);
  if (calls.size() > 1 && !layout.parallel)
    throw Error("tool calls: format " + std::string(format.name) + " writes one call at a time, not " +
                std::to_string(calls.size()));
  std::string out = layout.before;
  for (size_t i = 0; i < calls.size(); ++i) {
    const ordered_json arguments = ordered_json::parse(calls[i].arguments, nullptr, false);
    if (!arguments.is_object())
      throw Error("tool call " + calls[i].name + ": arguments are not a JSON object: " + calls[i].arguments);
    const std::string_view key = arguments_key(format.syntax);
    std::string body = format.syntax == ToolCallSyntax::QwenXml ? xml_parameters(arguments)
                       : key.empty()                            ? arguments.dump()
                                     : ordered_json{{"name", calls[i].name}, {std::string(key), arguments}}.dump();
    out += (i ? layout.between : "") + call_open(format, calls[i].name) + body + call_close(format);
  }
  return out + layout.after;
}

std::string tools_system_text(const ToolCallFormat& format, const ordered_json& tools, bool parallel) {
  if (!tools.is_array()) throw Error("tools: not a list: " + tools.dump());
  ordered_json functions = ordered_json::array();
  for (const ordered_json& tool : tools) functions.push_back(function_of(tool));
  std::string text = "You can call the following tools (each with the JSON Schema of its arguments):\n" +
                     functions.dump(2) + "\n\n";
  const ToolCallLayout layout = tool_call_layout(format, parallel);
  const ToolCall first{"", "tool_name", R"({"argument": "value"})"}, second{"", "other_tool", "{}"};
  const std::string calls = render_tool_calls(format, layout.parallel ? std::vector{first, second} : std::vector{first},
                                              layout.parallel);
  const std::string what = layout.parallel ? "one or more tools" : "a tool";
  if (format.syntax != ToolCallSyntax::Generic) return text + "To call " + what + ", write:\n" + calls;
  return text + "Answer with one JSON object and nothing else. To call " + what + ":\n" + calls +
         "\nTo answer the user directly:\n{\"response\": \"your answer\"}";
}

}  // namespace r1pi
