// Answers in OpenAI's shapes: chat.completion / text_completion objects, their streaming chunks
// (chat.completion.chunk; the first delta carries the role, reasoning in reasoning_content), usage,
// and r1pi's timings (named as llama.cpp's server names them).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "chat/completion.h"
#include "chat/tool_call_parser.h"
#include "server/api_request.h"

namespace r1pi {

struct ResponseId {
  std::string id;      // "chatcmpl-..." or "cmpl-..."
  int64_t created;     // Unix seconds
  std::string model;
  uint64_t ticket = 0, served = 0;  // the request's arrival and service order (Job)
};
ResponseId new_response_id(Endpoint endpoint, const std::string& model);

nlohmann::json usage_json(const Completion& c);
nlohmann::json timings_json(const Completion& c, const ResponseId& id);

// The whole answer of a request that did not stream; logprobs: the choice's (logprobs_json.h),
// null when not asked.
// calls: the answer read for tool calls (tool_call_parser.h) when the request offered tools: its
// content and tool_calls replace the text's, and finish_reason is "tool_calls" when it has some.
nlohmann::json response_json(const ApiRequest& r, const ResponseId& id, const Completion& c,
                             const nlohmann::json& logprobs = nullptr, const ParsedOutput* calls = nullptr);
// A chat stream's event with this delta (a tool call's piece: tool_call_parser.h's openai_delta).
nlohmann::json delta_chunk_json(const ApiRequest& r, const ResponseId& id, const nlohmann::json& delta,
                                const char* finish_reason = nullptr, const nlohmann::json& logprobs = nullptr);

// One streamed event: a piece of text, or (with finish_reason) the last one; logprobs: its tokens'.
nlohmann::json chunk_json(const ApiRequest& r, const ResponseId& id, const TextParts& parts,
                          const char* finish_reason = nullptr, const nlohmann::json& logprobs = nullptr);
// The chat stream's first event: the role, no text.
nlohmann::json role_chunk_json(const ResponseId& id);
// The stream's usage event (stream_options.include_usage): empty choices.
nlohmann::json usage_chunk_json(const ApiRequest& r, const ResponseId& id, const Completion& c);

// The JSON as text; invalid UTF-8 (a random model's bytes) becomes U+FFFD rather than an exception.
std::string json_text(const nlohmann::json& j);
// "data: <json>\n\n"
std::string sse_event(const nlohmann::json& j);

}  // namespace r1pi
