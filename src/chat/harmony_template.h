// gpt-oss's harmony format (shared/data/gptoss/ARCH_FACTS.md section 7) as the model's Jinja
// template writes it, tools included: the system message with the reasoning level, the developer
// message with the instructions and the tools as a TypeScript namespace, the turns, then the
// assistant's start (the model writes the channel). docs/chat-templates.md says where it departs
// from the template (the date, several calls in one turn).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.h"

namespace r1pi {

// effort: low, medium or high ("" medium); tools: the request's `tools` (null or empty: none).
// Throws r1pi::Error for a tool result with no call before it, or a tool without a name.
std::string render_harmony(const std::vector<ChatMessage>& messages, std::string_view effort,
                           const nlohmann::ordered_json& tools);

// The developer message's tool list: "## functions\n\nnamespace functions {\n\n...} // namespace
// functions", each tool a commented `type f = (_: {...}) => any;`.
std::string harmony_functions_namespace(const nlohmann::ordered_json& tools);

}  // namespace r1pi
