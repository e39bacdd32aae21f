#include "server/anthropic_response.h"

#include <algorithm>

namespace r1pi {

using json = nlohmann::ordered_json;

namespace {

// A tool_use block: its id (the parser's, else one made from the message's) and its input, parsed
// from the arguments the model wrote.
struct ToolUse {
  std::string id, name;
  json input;
};

// Anthropic's error types by HTTP status; another 4xx is invalid_request_error, another 5xx api_error.
constexpr std::pair<int, const char*> kErrorTypes[] = {
    {401, "authentication_error"}, {403, "permission_error"}, {404, "not_found_error"},
    {413, "request_too_large"},    {429, "rate_limit_error"}, {503, "overloaded_error"},
};

const char* error_type(int status) {
  for (const auto& [code, type] : kErrorTypes)
    if (code == status) return type;
  return status < 500 ? "invalid_request_error" : "api_error";
}

std::string event(const char* name, json data) {
  json out = {{"type", name}};
  out.update(data);
  return std::string("event: ") + name + "\ndata: " + json_text(out) + "\n\n";
}

ToolUse tool_use(const ResponseId& id, const ToolCall& call, size_t i) {
  json input = json::parse(call.arguments, nullptr, false);
  if (input.is_discarded() || !input.is_object())
    throw ApiError(500, "the call of tool '" + call.name + "' has arguments that are not a JSON object", "server_error");
  std::string use_id = call.id;
  if (use_id.empty()) use_id = "toolu_" + id.id.substr(id.id.find('_') + 1) + "_" + std::to_string(i);
  return {use_id, call.name, std::move(input)};
}

// The calls from the first'th on, all checked before any is used.
std::vector<ToolUse> tool_uses(const ResponseId& id, const std::vector<ToolCall>& calls, size_t first = 0) {
  std::vector<ToolUse> uses;
  for (size_t i = first; i < calls.size(); ++i) uses.push_back(tool_use(id, calls[i], i));
  return uses;
}

json message_envelope(const ResponseId& id, json content, json stop_reason, json stop_sequence, json usage) {
  return {{"id", id.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", id.model},
          {"content", std::move(content)},
          {"stop_reason", std::move(stop_reason)},
          {"stop_sequence", std::move(stop_sequence)},
          {"usage", std::move(usage)}};
}

json stop_sequence_json(const AnthropicEnding& ending) {
  return ending.stop_sequence ? json(*ending.stop_sequence) : json(nullptr);
}

}  // namespace

ResponseId new_message_id(const std::string& model) {
  ResponseId id = new_response_id(Endpoint::Chat, model);
  id.id = "msg_" + id.id.substr(id.id.find('-') + 1);
  return id;
}

const char* anthropic_stop_reason(const Completion& c, const AnthropicEnding& ending) {
  if (c.finish_reason == "length") return "max_tokens";
  if (!ending.tool_calls.empty()) return "tool_use";
  if (ending.stop_sequence) return "stop_sequence";
  return "end_turn";
}

json anthropic_usage_json(const Completion& c) {
  return {{"input_tokens", c.prompt_tokens - c.cached_tokens},
          {"output_tokens", c.completion_tokens()},
          {"cache_read_input_tokens", c.cached_tokens}};
}

json anthropic_message_json(const ResponseId& id, const Completion& c, const AnthropicEnding& ending) {
  json content = json::array();
  if (!c.text.reasoning.empty())
    content.push_back({{"type", "thinking"}, {"thinking", c.text.reasoning}, {"signature", ""}});
  if (!c.text.content.empty()) content.push_back({{"type", "text"}, {"text", c.text.content}});
  for (ToolUse& use : tool_uses(id, ending.tool_calls))
    content.push_back({{"type", "tool_use"}, {"id", use.id}, {"name", use.name}, {"input", std::move(use.input)}});
  return message_envelope(id, std::move(content), anthropic_stop_reason(c, ending), stop_sequence_json(ending),
                          anthropic_usage_json(c));
}

json count_tokens_json(size_t input_tokens) { return {{"input_tokens", input_tokens}}; }

json anthropic_error_body(const ApiError& e) {
  return {{"type", "error"}, {"error", {{"type", error_type(e.status)}, {"message", e.what()}}}};
}

std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string AnthropicStream::start() const {
  // The prompt's tokens as they are known before the engine looks at its cache; message_delta
  // gives the split into cached and not.
  const json usage = {{"input_tokens", prompt_tokens_}, {"output_tokens", 0}, {"cache_read_input_tokens", 0}};
  return event("message_start", {{"message", message_envelope(id_, json::array(), nullptr, nullptr, usage)}}) +
         event("ping", json::object());
}

std::string AnthropicStream::open(Block block) {
  std::string events = close();
  open_ = block;
  ++index_;
  const json content_block = block == Block::Thinking ? json{{"type", "thinking"}, {"thinking", ""}}
                                                      : json{{"type", "text"}, {"text", ""}};
  return events + event("content_block_start", {{"index", index_}, {"content_block", content_block}});
}

std::string AnthropicStream::close() {
  if (open_ == Block::None) return "";
  std::string events;
  // Anthropic ends a thinking block with its signature; r1pi's reasoning has none to give.
  if (open_ == Block::Thinking)
    events = event("content_block_delta", {{"index", index_}, {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
  open_ = Block::None;
  return events + event("content_block_stop", {{"index", index_}});
}

std::string AnthropicStream::push(const TextParts& piece) {
  std::string events;
  if (!piece.reasoning.empty()) {
    if (open_ != Block::Thinking) events += open(Block::Thinking);
    events += event("content_block_delta",
                    {{"index", index_}, {"delta", {{"type", "thinking_delta"}, {"thinking", piece.reasoning}}}});
  }
  if (!piece.content.empty()) {
    if (open_ != Block::Text) events += open(Block::Text);
    events += event("content_block_delta", {{"index", index_}, {"delta", {{"type", "text_delta"}, {"text", piece.content}}}});
  }
  return events;
}

std::string AnthropicStream::tool_use_block(const std::string& id, const std::string& name, const json& input) {
  std::string events = close();
  ++index_;
  events += event("content_block_start",
                  {{"index", index_},
                   {"content_block", {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", json::object()}}}});
  events += event("content_block_delta",
                  {{"index", index_}, {"delta", {{"type", "input_json_delta"}, {"partial_json", json_text(input)}}}});
  return events + event("content_block_stop", {{"index", index_}});
}

std::string AnthropicStream::push_call(const ToolCall& call) {
  const ToolUse use = tool_use(id_, call, calls_sent_);
  const std::string events = tool_use_block(use.id, use.name, use.input);
  ++calls_sent_;
  return events;
}

std::string AnthropicStream::finish(const Completion& c, const AnthropicEnding& ending) {
  std::string events;
  for (const ToolUse& use : tool_uses(id_, ending.tool_calls, calls_sent_)) events += tool_use_block(use.id, use.name, use.input);
  events += close();
  events += event("message_delta", {{"delta", {{"stop_reason", anthropic_stop_reason(c, ending)},
                                               {"stop_sequence", stop_sequence_json(ending)}}},
                                    {"usage", anthropic_usage_json(c)}});
  return events + event("message_stop", json::object());
}

std::string AnthropicStream::error(const ApiError& e) { return event("error", anthropic_error_body(e)); }

}  // namespace r1pi
