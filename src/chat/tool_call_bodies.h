// The calls inside one piece of model output that the stream parser (tool_call_parser.h) has cut
// out, per call syntax. Nothing when the piece is not a valid call: the parser then keeps it as
// content. Arguments are a JSON object whatever the model wrote (an object, a string holding one,
// or QwenXml's parameters); key order is the model's.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace r1pi {

struct ParsedCall {
  std::string name;
  nlohmann::ordered_json arguments;  // an object
};
using ParsedCalls = std::optional<std::vector<ParsedCall>>;

// Between "<tool_call>" and "</tool_call>": Hermes's {"name", "arguments"} or QwenXml's
// <function=f> block. tools (the request's `tools`, may be null) give QwenXml's parameter types:
// a parameter typed other than string is read as JSON where it parses.
ParsedCalls parse_tool_call_block(std::string_view body, const nlohmann::ordered_json& tools);
// Whether QwenXml's value of a parameter with this JSON Schema is text (typed string, or untyped),
// rather than JSON: the parser's rule, which the forced-call grammar follows too.
bool xml_value_is_text(const nlohmann::ordered_json& parameter_schema);
// Between "<｜tool▁call▁begin｜>" and "<｜tool▁call▁end｜>": "f<｜tool▁sep｜>{args}" (V3.1) or
// "function<｜tool▁sep｜>f\n```json\n{args}\n```" (R1).
ParsedCalls parse_deepseek_call(std::string_view body);
// A JSON list of {"name", "arguments"} (Mistral Nemo, Granite); an empty list is no call.
ParsedCalls parse_call_list(std::string_view json_text);
// Llama 3: {"name", "parameters"} (or "arguments"), or a built-in tool's f.call(x="...", y=1).
ParsedCalls parse_llama_call(std::string_view text);
// Generic: {"tool_call": {...}} or {"tool_calls": [{...}, ...]}.
ParsedCalls parse_generic_calls(std::string_view json_text);
// One call from a name and its arguments' JSON text (Mistral Small's [ARGS]).
ParsedCalls parse_named_call(std::string_view name, std::string_view arguments_json);

}  // namespace r1pi
