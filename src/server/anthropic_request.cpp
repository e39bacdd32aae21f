#include "server/anthropic_request.h"

#include <algorithm>
#include <cctype>
#include <random>

#include "server/json_fields.h"

namespace r1pi {

namespace {

// Ordered: the tools' schemas and the tool calls' inputs keep the client's key order, which the
// prompt renders (and which the answer that made them had, so the prompt cache still matches).
using json = nlohmann::ordered_json;

std::string at(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

ChatMessage message_of(const std::string& role, std::string content = {}) {
  ChatMessage m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

// A content block's type: the block must be an object that has one.
const std::string& block_type(const json& block, const std::string& where) {
  if (!block.is_object()) bad_request("'" + where + "' must be a content block (an object with a 'type')");
  return string_field(block, "type", where);
}

[[noreturn]] void refuse_block(const std::string& type, const std::string& where, const std::string& takes) {
  if (type == "image" || type == "document")
    bad_request("'" + where + "' is " + (type == "image" ? "an " : "a ") + type + " block: r1pi takes text only");
  bad_request(quoted_field("type", where) + " is '" + type + "': " + takes);
}

// Text given as a string or as a list of text blocks (the system prompt, a tool's result), joined
// as the OpenAI parser joins a message's text parts.
std::string text_of(const json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) bad_request("'" + where + "' must be a string or a list of text blocks");
  std::string text;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string block = at(where, i);
    const std::string& type = block_type(value[i], block);
    if (type != "text") refuse_block(type, block, "only text blocks go here");
    text += string_field(value[i], "text", block);
  }
  return text;
}

ToolCall read_tool_use(const json& block, const std::string& where) {
  ToolCall call{string_field(block, "id", where), string_field(block, "name", where), ""};
  if (!block.contains("input") || !block["input"].is_object()) bad_request(quoted_field("input", where) + " must be an object");
  call.arguments = block["input"].dump();
  return call;
}

// A tool_result answers a tool_use of the assistant message just before (Anthropic's rule); the
// call gives the tool message its function's name.
ChatMessage read_tool_result(const json& block, const std::string& where, const std::vector<ChatMessage>& before) {
  ChatMessage result = message_of("tool");
  result.tool_call_id = string_field(block, "tool_use_id", where);
  const ToolCall* call = nullptr;
  if (!before.empty() && before.back().role == "assistant")
    for (const ToolCall& c : before.back().tool_calls)
      if (c.id == result.tool_call_id) call = &c;
  if (!call)
    bad_request(quoted_field("tool_use_id", where) + " is '" + result.tool_call_id +
                "': no tool_use block of the assistant message before has that id");
  result.name = call->name;
  if (has(block, "content")) result.content = text_of(block["content"], where + ".content");
  // A template has no place for the flag: the model reads that the call failed in the text.
  if (flag(block, "is_error", where)) result.content = "Error: " + result.content;
  return result;
}

// One Anthropic message as r1pi's messages. A user message's tool_result blocks become tool
// messages, in order, ahead of its text (a user message follows only when it has text, or has no
// results); an assistant message's thinking becomes its reasoning and its tool_use blocks its calls.
void read_message(const json& m, const std::string& where, std::vector<ChatMessage>& out) {
  if (!m.is_object()) bad_request("'" + where + "' must be an object with a 'role' and a 'content'");
  const std::string& role = string_field(m, "role", where);
  if (role != "user" && role != "assistant")
    bad_request(quoted_field("role", where) + " is '" + role +
                "': the Messages API takes user and assistant (the system prompt is the top-level 'system')");
  if (!has(m, "content")) bad_request(quoted_field("content", where) + " is required");
  const json& content = m["content"];
  ChatMessage message = message_of(role);
  if (content.is_string()) {
    message.content = content.get<std::string>();
    out.push_back(message);
    return;
  }
  if (!content.is_array()) bad_request(quoted_field("content", where) + " must be a string or a list of content blocks");
  const bool user = role == "user";
  std::vector<ChatMessage> results;
  bool has_text = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string block_where = at(where + ".content", i);
    const json& block = content[i];
    const std::string& type = block_type(block, block_where);
    if (type == "text") {
      message.content += string_field(block, "text", block_where);
      has_text = true;
    } else if (!user && type == "thinking") {
      message.reasoning_content += string_field(block, "thinking", block_where);
    } else if (!user && type == "redacted_thinking") {
      // Encrypted reasoning of Anthropic's models: nothing r1pi's templates could show.
    } else if (!user && type == "tool_use") {
      message.tool_calls.push_back(read_tool_use(block, block_where));
    } else if (user && type == "tool_result") {
      results.push_back(read_tool_result(block, block_where, out));
    } else {
      refuse_block(type, block_where,
                   user ? "a user message takes text and tool_result blocks"
                        : "an assistant message takes text, thinking, redacted_thinking and tool_use blocks");
    }
  }
  out.insert(out.end(), results.begin(), results.end());
  if (!user || has_text || results.empty()) out.push_back(message);
}

void read_messages(const json& body, ApiRequest& r) {
  const json& list = body["messages"];
  if (!list.is_array() || list.empty()) bad_request("'messages' must be a non-empty list");
  for (size_t i = 0; i < list.size(); ++i) read_message(list[i], at("messages", i), r.messages);
  // Anthropic continues a last assistant message (a prefill); r1pi's templates close every
  // assistant turn they render and open a new one, which would answer something else.
  if (list.back().value("role", "") == "assistant")
    bad_request("'messages' ends with an assistant message: r1pi answers after a user message (no prefill)");
}

// A tool's name as Anthropic allows it: 1 to 128 letters, digits, '_' or '-'.
bool tool_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// Anthropic's client tools ({name, description, input_schema}) as OpenAI's function tools, the
// shape ApiRequest carries; server tools (web search, code execution...) would need a runtime
// r1pi does not have.
void read_tools(const json& body, ApiRequest& r) {
  const json& list = body["tools"];
  if (!list.is_array()) bad_request("'tools' must be a list of tools");
  if (list.empty()) return;
  r.tools = json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = at("tools", i);
    const json& tool = list[i];
    if (!tool.is_object()) bad_request("'" + where + "' must be an object with a 'name' and an 'input_schema'");
    if (has(tool, "type") && tool["type"] != "custom")
      bad_request(quoted_field("type", where) + " is " + tool["type"].dump() +
                  ": r1pi runs no server tools (give custom tools: name, description, input_schema)");
    const std::string& name = string_field(tool, "name", where);
    if (!tool_name_ok(name))
      bad_request(quoted_field("name", where) + " must be 1 to 128 letters, digits, '_' or '-'");
    for (const json& earlier : r.tools)
      if (earlier["function"]["name"] == name) bad_request(quoted_field("name", where) + " '" + name + "' is given twice");
    if (!tool.contains("input_schema") || !tool["input_schema"].is_object())
      bad_request(quoted_field("input_schema", where) + " must be an object (a JSON schema)");
    json function = {{"name", name}};
    if (has(tool, "description")) function["description"] = string_field(tool, "description", where);
    function["parameters"] = tool["input_schema"];
    r.tools.push_back({{"type", "function"}, {"function", function}});
  }
}

void read_tool_choice(const json& body, ApiRequest& r) {
  const json& choice = body["tool_choice"];
  static const std::pair<const char*, ToolChoice> kChoices[] = {
      {"auto", ToolChoice::Auto}, {"any", ToolChoice::Required}, {"tool", ToolChoice::Function}, {"none", ToolChoice::None}};
  const std::string& type = string_field(choice, "type", "tool_choice");
  const auto known = std::find_if(std::begin(kChoices), std::end(kChoices), [&](const auto& c) { return type == c.first; });
  if (known == std::end(kChoices)) bad_request("'tool_choice.type' is '" + type + "': give auto, any, tool or none");
  r.tool_choice = known->second;
  if (r.tool_choice == ToolChoice::None) return;
  r.parallel_tool_calls = !flag(choice, "disable_parallel_tool_use", "tool_choice");
  if (r.tool_choice == ToolChoice::Auto) return;
  if (r.tools.is_null()) bad_request("'tool_choice' " + type + " needs 'tools'");
  if (r.tool_choice != ToolChoice::Function) return;
  r.tool_choice_name = string_field(choice, "name", "tool_choice");
  for (const json& tool : r.tools)
    if (tool["function"]["name"] == r.tool_choice_name) return;
  bad_request("'tool_choice.name' is '" + r.tool_choice_name + "': no tool of 'tools' has that name");
}

// Extended thinking: the template's enable_thinking. The budget is checked as Anthropic checks it
// but not enforced: the reasoning ends when the model closes it, within max_tokens.
void read_thinking(const json& body, ApiRequest& r) {
  const json& thinking = body["thinking"];
  const std::string& type = string_field(thinking, "type", "thinking");
  if (type == "disabled") {
    r.enable_thinking = false;
    return;
  }
  if (type != "enabled") bad_request("'thinking.type' is '" + type + "': give enabled or disabled");
  if (!has(thinking, "budget_tokens")) bad_request("'thinking.budget_tokens' is required when thinking is enabled");
  const int64_t budget = integer_in(thinking, "budget_tokens", 1024, 1 << 24, "thinking");
  if (r.max_tokens > 0 && budget >= r.max_tokens) bad_request("'thinking.budget_tokens' must be less than 'max_tokens'");
  r.enable_thinking = true;
}

void read_stop_sequences(const json& body, ApiRequest& r) {
  const json& list = body["stop_sequences"];
  if (!list.is_array()) bad_request("'stop_sequences' must be a list of strings");
  for (const json& stop : list) {
    if (!stop.is_string()) bad_request("'stop_sequences' must be a list of strings");
    r.stop.push_back(stop.get<std::string>());
  }
}

// metadata.user_id is Anthropic's name for the end user, OpenAI's `user`: it scopes the prompt cache.
void read_metadata(const json& body, ApiRequest& r) {
  const json& metadata = body["metadata"];
  if (!metadata.is_object()) bad_request("'metadata' must be an object");
  if (has(metadata, "user_id")) r.user = string_field(metadata, "user_id", "metadata");
}

enum class Need { Optional, Always, ToGenerate };  // ToGenerate: /v1/messages, not count_tokens

struct Field {
  const char* name;
  Need need;
  void (*read)(const json& body, ApiRequest& r);
};

// The top-level fields r1pi takes, read in this order (the system prompt before the messages,
// tool_choice after tools, thinking after max_tokens). Any other field is refused: Anthropic's
// server-side features (container, mcp_servers, context_management, output_format...) would be
// silently missing from the answer.
const Field kFields[] = {
    // One model is served, whatever the name asked for.
    {"model", Need::Always, [](const json& b, ApiRequest&) { string_field(b, "model"); }},
    {"max_tokens", Need::ToGenerate,
     [](const json& b, ApiRequest& r) { r.max_tokens = int(integer_in(b, "max_tokens", 1, 1 << 24)); }},
    {"system", Need::Optional,
     [](const json& b, ApiRequest& r) { r.messages.push_back(message_of("system", text_of(b["system"], "system"))); }},
    {"messages", Need::Always, read_messages},
    {"tools", Need::Optional, read_tools},
    {"tool_choice", Need::Optional, read_tool_choice},
    {"thinking", Need::Optional, read_thinking},
    {"stop_sequences", Need::Optional, read_stop_sequences},
    {"temperature", Need::Optional,
     [](const json& b, ApiRequest& r) { r.sampler.temperature = float(number_in(b, "temperature", 0, 1)); }},
    {"top_p", Need::Optional, [](const json& b, ApiRequest& r) { r.sampler.top_p = float(number_in(b, "top_p", 0, 1)); }},
    {"top_k", Need::Optional, [](const json& b, ApiRequest& r) { r.sampler.top_k = int(integer_in(b, "top_k", 0, 1 << 30)); }},
    {"stream", Need::Optional, [](const json& b, ApiRequest& r) { r.stream = flag(b, "stream"); }},
    {"metadata", Need::Optional, read_metadata},
    // Priority capacity: one server has one tier.
    {"service_tier", Need::Optional, [](const json& b, ApiRequest&) {
       const std::string& tier = string_field(b, "service_tier");
       if (tier != "auto" && tier != "standard_only") bad_request("'service_tier' is '" + tier + "': give auto or standard_only");
     }},
};

}  // namespace

ApiRequest parse_anthropic_request(AnthropicRoute route, std::string_view text, const SamplerParams& defaults) {
  const json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) bad_request("the body is not valid JSON");
  if (!body.is_object()) bad_request("the body must be a JSON object");
  for (const auto& item : body.items()) {
    // A named key, not a structured binding: clang 14 (the fuzz build's) cannot capture one.
    const std::string& name = item.key();
    if (std::none_of(std::begin(kFields), std::end(kFields), [&](const Field& f) { return name == f.name; }))
      bad_request("'" + name + "' is not a field r1pi's Messages API takes");
  }
  ApiRequest r;
  r.endpoint = Endpoint::Chat;
  r.sampler = defaults;
  r.sampler.seed = std::random_device{}();  // Anthropic's API has no seed
  for (const Field& f : kFields) {
    if (has(body, f.name)) f.read(body, r);
    else if (f.need == Need::Always || (f.need == Need::ToGenerate && route == AnthropicRoute::Messages))
      bad_request(std::string("'") + f.name + "' is required");
  }
  return r;
}

}  // namespace r1pi
