// Answers in the shapes of Anthropic's Messages API: the message object, its streamed events
// (AnthropicStream), errors, and count_tokens' answer. Built from what the OpenAI answers are built
// from (a Completion, its pieces of text) plus the tool calls parsed from the answer. Ordered JSON:
// the fields come in Anthropic's order, and a tool call's input keeps the order the model wrote.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "chat/completion.h"
#include "server/api_error.h"
#include "server/api_response.h"

namespace r1pi {

// A ResponseId whose id is "msg_..." (new_response_id's clock and counter).
ResponseId new_message_id(const std::string& model);

// What an answer says beyond its Completion: the tool calls parsed from it, and the stop sequence
// that ended it (a Completion says that a stop string matched, not which one; nullopt: none did).
struct AnthropicEnding {
  std::vector<ToolCall> tool_calls;
  std::optional<std::string> stop_sequence;
};

// max_tokens (the length or the context ran out), tool_use, stop_sequence or end_turn.
const char* anthropic_stop_reason(const Completion& c, const AnthropicEnding& ending);

// {input_tokens (those not from the cache), output_tokens, cache_read_input_tokens}.
nlohmann::ordered_json anthropic_usage_json(const Completion& c);

// The whole answer of a request that did not stream: content is a thinking block (the reasoning,
// signature ""), a text block and a tool_use block per call, each only when there is one. A call
// whose arguments are not a JSON object is an ApiError(500).
nlohmann::ordered_json anthropic_message_json(const ResponseId& id, const Completion& c, const AnthropicEnding& ending);

// POST /v1/messages/count_tokens' answer.
nlohmann::ordered_json count_tokens_json(size_t input_tokens);

// {"type": "error", "error": {"type", "message"}}, the type from the status (400
// invalid_request_error, 401 authentication_error, 404 not_found_error, 503 overloaded_error...).
nlohmann::ordered_json anthropic_error_body(const ApiError& e);

// json_text() for ordered JSON: invalid UTF-8 becomes U+FFFD rather than an exception.
std::string json_text(const nlohmann::ordered_json& j);

// The streamed answer as Anthropic's server-sent events ("event: NAME\ndata: JSON\n\n"), fed what
// the OpenAI stream is fed. Each call returns the events to send now, in order: message_start and
// a ping; per block content_block_start, its deltas, content_block_stop, with increasing indexes
// (the reasoning one thinking block, the answer one text block after it); the tool_use blocks,
// each as soon as it is complete or all at the end; message_delta (stop reason, usage) and
// message_stop.
class AnthropicStream {
 public:
  AnthropicStream(ResponseId id, int prompt_tokens) : id_(std::move(id)), prompt_tokens_(prompt_tokens) {}

  std::string start() const;
  // A piece of reasoning and/or answer, as the reasoning split hands it over.
  std::string push(const TextParts& piece);
  // A call as soon as the parser completes it: the open block closed, a tool_use block (its input
  // whole, in one input_json_delta). Throws ApiError(500) as anthropic_message_json does.
  std::string push_call(const ToolCall& call);
  // The calls of ending.tool_calls that push_call did not send (all, for a stream that sends them
  // at the end) as push_call sends them, then the open block closed, message_delta and
  // message_stop. Throws as push_call does, before it returns any event.
  std::string finish(const Completion& c, const AnthropicEnding& ending);
  // A failure mid-stream, after which nothing more is sent.
  static std::string error(const ApiError& e);

 private:
  enum class Block { None, Thinking, Text };
  std::string open(Block block);
  std::string close();
  std::string tool_use_block(const std::string& id, const std::string& name, const nlohmann::ordered_json& input);

  ResponseId id_;
  int prompt_tokens_;
  Block open_ = Block::None;
  int index_ = -1;  // the open (or last) block's
  size_t calls_sent_ = 0;
};

}  // namespace r1pi
