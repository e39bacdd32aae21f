// One message of a conversation, as the templates render it and the APIs carry it (OpenAI's chat
// messages and Anthropic's content blocks both map onto it).
#pragma once
#include <string>
#include <vector>

namespace r1pi {

// A function call the assistant made: OpenAI's tool_calls[i] (arguments as the JSON text the
// model wrote, the form OpenAI sends), Anthropic's tool_use block.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON object, as text
};

struct ChatMessage {
  std::string role;     // "system", "developer", "user", "assistant" or "tool"
  std::string content;
  std::string reasoning_content{};   // assistant: its reasoning (the think block), when given apart
  std::vector<ToolCall> tool_calls{};  // assistant
  std::string tool_call_id{};        // tool: the call this result answers
  std::string name{};                // tool: the function's name, where the client gives it
};

}  // namespace r1pi
