// Answers in OpenAI's shapes: chat.completion / text_completion objects, their streaming chunks
// (chat.completion.chunk; the first delta carries the role, reasoning in reasoning_content), usage,
// and r1pi's timings (named as llama.cpp's server names them).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "chat/completion.h"
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

// The whole answer of a request that did not stream.
nlohmann::json response_json(const ApiRequest& r, const ResponseId& id, const Completion& c);

// One streamed event: a piece of text, or (with finish_reason) the last one.
nlohmann::json chunk_json(const ApiRequest& r, const ResponseId& id, const TextParts& parts,
                          const char* finish_reason = nullptr);
// The chat stream's first event: the role, no text.
nlohmann::json role_chunk_json(const ResponseId& id);
// The stream's usage event (stream_options.include_usage): empty choices.
nlohmann::json usage_chunk_json(const ApiRequest& r, const ResponseId& id, const Completion& c);

// The JSON as text; invalid UTF-8 (a random model's bytes) becomes U+FFFD rather than an exception.
std::string json_text(const nlohmann::json& j);
// "data: <json>\n\n"
std::string sse_event(const nlohmann::json& j);

}  // namespace r1pi
