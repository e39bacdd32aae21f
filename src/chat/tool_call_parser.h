// A model's answer read back into content text and function calls, in its family's call syntax
// (tool_call_format.h), as it streams or whole. The whole parse is the stream fed everything at
// once, so the deltas of any cut of the text add up to it exactly.
//
// Content is the text outside the calls with its leading and trailing whitespace dropped (a
// stream holds back trailing whitespace until text follows it). A call that is not valid (bad
// JSON, no name, arguments not an object, cut off by the end) stays content, as written. A call is
// announced once it is complete and valid: its start, then its arguments as compact JSON
// (nlohmann's dump() of what the model wrote, keys in the model's order) in one piece.
// The think block is the caller's business: give the text after it.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.h"
#include "chat/tool_call_bodies.h"
#include "chat/tool_call_format.h"

namespace r1pi {

struct ToolCallDelta {
  enum class Kind { Content, CallStart, Arguments };
  Kind kind;
  std::string text;  // Content: the text; CallStart: the function's name; Arguments: JSON text
  size_t index = 0;  // CallStart, Arguments: the call's place in tool_calls
  std::string id;    // CallStart
};

// OpenAI's chat.completion.chunk choices[0].delta for one delta: {"content": ...}, or
// {"tool_calls": [{"index", "id", "type": "function", "function": {"name", "arguments": ""}}]}
// at a call's start, then {"tool_calls": [{"index", "function": {"arguments": ...}}]}.
nlohmann::ordered_json openai_delta(const ToolCallDelta& delta);

struct ParsedOutput {
  std::string content;
  std::vector<ToolCall> tool_calls;
};
// Adds a delta to what came before it.
void apply_delta(ParsedOutput& output, const ToolCallDelta& delta);

// Makes each call's id; the default is new_tool_call_id(format). Tests pass a counter.
using CallIdGenerator = std::function<std::string()>;

class ToolCallStream {
 public:
  // tools: the request's `tools` (null for none); only QwenXml reads them (parameter types).
  explicit ToolCallStream(ToolCallFormat format, CallIdGenerator new_id = {},
                          nlohmann::ordered_json tools = nullptr);
  // The deltas that the text so far decides; what may still be (part of) a call is held back.
  std::vector<ToolCallDelta> push(std::string_view text);
  // The end of the answer: what was held back, decided. Call once, after the last push.
  std::vector<ToolCallDelta> finish();

 private:
  enum class State {
    Leading,        // Llama3, Generic: a call may open here (the answer's start, or after a call)
    Text,           // content, watching for the format's markers
    Unit,           // held_ opens a call (a marker, or '{' when Leading): waiting for its end
    Response,       // Generic: inside {"response": "...": its characters are content
    AfterResponse,  // Generic: after that string, its closing '}' is dropped
  };
  struct UnitEnd {
    bool ready;     // false: more text needed
    size_t length;  // the unit's length in held_
    ParsedCalls calls;
  };
  bool step(bool final);  // one decision; false when it needs more text
  bool step_leading(bool final);
  bool step_text(bool final);
  bool step_unit(bool final);
  bool step_response(bool final);
  bool step_after_response();
  UnitEnd unit_end(bool final) const;
  UnitEnd marked_unit_end(std::string_view close, bool final) const;
  UnitEnd list_unit_end(bool final) const;
  UnitEnd mistral_unit_end(bool final) const;
  UnitEnd harmony_unit_end(bool final) const;
  UnitEnd llama_unit_end(bool final) const;
  UnitEnd generic_unit_end(bool final) const;
  void emit_content(std::string_view text);
  void emit_calls(std::vector<ParsedCall>& calls);

  ToolCallFormat format_;
  CallIdGenerator new_id_;
  nlohmann::ordered_json tools_;
  State state_;
  std::string held_;  // text not decided yet
  std::vector<ToolCallDelta> out_;
  bool content_started_ = false;  // leading whitespace is dropped until then
  std::string pending_space_;     // trailing whitespace, emitted only when text follows
  size_t calls_ = 0;
};

// The whole answer at once (ToolCallStream fed everything, then finished).
ParsedOutput parse_tool_calls(const ToolCallFormat& format, std::string_view text, CallIdGenerator new_id = {},
                              const nlohmann::ordered_json& tools = nullptr);

}  // namespace r1pi
