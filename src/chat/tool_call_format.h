// How a model family writes a function call, read from its chat template: the syntax the parser
// reads back (tool_call_parser.h), the literal text and JSON Schema a grammar needs to force a
// valid call, and the system text that lists the tools when the template does not.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.h"

namespace r1pi {

enum class ToolCallSyntax {
  Generic,      // {"tool_call": {"name", "arguments"}} / {"tool_calls": [...]} / {"response": "..."}
  Hermes,       // <tool_call>\n{"name", "arguments"}\n</tool_call>, one block per call
  QwenXml,      // <tool_call>\n<function=f>\n<parameter=x>\nvalue\n</parameter>\n</function>\n</tool_call>
  Llama3,       // {"name", "parameters"} as the whole answer, optionally after <|python_tag|>
  DeepSeekV3,   // <｜tool▁call▁begin｜>f<｜tool▁sep｜>{args}<｜tool▁call▁end｜> in <｜tool▁calls▁begin｜>...end
  DeepSeekR1,   // <｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{args}\n```<｜tool▁call▁end｜>
  JsonList,     // a marker, then a JSON list of {"name", "arguments"} (Mistral Nemo, Granite)
  MistralArgs,  // [TOOL_CALLS]f[ARGS]{args}, one per call (Mistral Small 3.2)
  Harmony,      // <|channel|>commentary to=functions.f<|message|>{args}<|call|>, one per turn (gpt-oss)
};

struct ToolCallFormat {
  std::string_view name;  // "generic", "hermes", "qwen3-coder", "llama3", ... (the table in the .cpp)
  ToolCallSyntax syntax;
  std::string_view list_marker;  // JsonList: the text before the list ("[TOOL_CALLS]", "<|tool_call|>")
  bool short_ids;                // Mistral's templates refuse ids other than 9 alphanumerics
  // Whether the template lists the tools itself when given `tools`. When false the caller renders
  // without tools and adds tools_system_text() to the system prompt. Generic: always false.
  bool renders_tools = false;
};

// The format for a GGUF's tokenizer.chat_template: the first known call syntax the template
// writes (see the table in the .cpp), else the generic one. Never throws.
ToolCallFormat detect_tool_call_format(std::string_view chat_template);
// The format of that name (any of tool_call_format_names()); throws r1pi::Error for another.
ToolCallFormat tool_call_format_named(std::string_view name);
std::string tool_call_format_names();  // "generic, hermes, ..." for messages

// A new call id in the format's style: OpenAI's "call_" + 24 alphanumerics, or Mistral's 9.
std::string new_tool_call_id(const ToolCallFormat& format);

// ---- for a grammar that admits only valid calls: the output is
//   before call (between call)* after        (one call only when !parallel)
// where each call is open + <JSON value valid against schema> + close for one of the tools.
struct ToolCallLayout {
  std::string before, between, after;
  bool parallel;  // false: exactly one call (asked so, or the family knows only one: Llama 3)
};
ToolCallLayout tool_call_layout(const ToolCallFormat& format, bool parallel);

struct ToolCallShape {
  std::string open, close;
  // The JSON value between open and close. Null for QwenXml, whose parameters are XML, not JSON:
  // each is "<parameter=NAME>\nVALUE\n</parameter>\n" (strings raw, other values as JSON).
  nlohmann::ordered_json schema;
};
// tool: one element of the request's `tools` ({"type": "function", "function": {...}}, or the
// bare function object). Throws r1pi::Error when it has no function name.
ToolCallShape tool_call_shape(const ToolCallFormat& format, const nlohmann::ordered_json& tool);
// A tool's parameters: its JSON Schema, or an object schema without properties where it has none.
// Throws as tool_call_shape.
nlohmann::ordered_json tool_parameters(const nlohmann::ordered_json& tool);

// Generic only, for "auto" tool choice: the answer that is no call, {"response": "..."}.
nlohmann::ordered_json generic_response_schema();

// The calls as the format writes them (before, calls, after), e.g. an earlier assistant turn for
// a template that does not render tool_calls in this syntax, or an example for the model.
std::string render_tool_calls(const ToolCallFormat& format, const std::vector<ToolCall>& calls, bool parallel);

// The system prompt text that lists the tools (their JSON) and says how to call them, for
// formats whose template does not render the tools (renders_tools false).
std::string tools_system_text(const ToolCallFormat& format, const nlohmann::ordered_json& tools, bool parallel);

}  // namespace r1pi
