#include "server/api_response.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "server/api_error.h"

namespace r1pi {

using nlohmann::json;

namespace {

const char* object_of(const ApiRequest& r, bool chunk) {
  if (r.endpoint == Endpoint::Completion) return "text_completion";
  return chunk ? "chat.completion.chunk" : "chat.completion";
}

json envelope(const ApiRequest& r, const ResponseId& id, bool chunk) {
  return {{"id", id.id}, {"object", object_of(r, chunk)}, {"created", id.created}, {"model", id.model},
          {"system_fingerprint", "r1pi"}};
}

json finish_value(const char* finish_reason) { return finish_reason ? json(finish_reason) : json(nullptr); }

// What OpenAI's finish_reason can say: a client that went away gets no answer anyway.
const char* openai_finish(const std::string& reason) { return reason == "length" ? "length" : "stop"; }

}  // namespace

json error_body(const std::string& message, const std::string& type, const std::string& code) {
  return {{"error", {{"message", message}, {"type", type}, {"param", nullptr},
                     {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

ResponseId new_response_id(Endpoint endpoint, const std::string& model) {
  static std::atomic<uint64_t> counter{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  return {std::string(endpoint == Endpoint::Chat ? "chatcmpl-" : "cmpl-") + "r1pi" + std::to_string(now) + "-" +
              std::to_string(++counter),
          now, model};
}

json usage_json(const Completion& c) {
  return {{"prompt_tokens", c.prompt_tokens}, {"completion_tokens", c.completion_tokens()},
          {"total_tokens", c.prompt_tokens + c.completion_tokens()},
          {"prompt_tokens_details", {{"cached_tokens", c.cached_tokens}}}};
}

json timings_json(const Completion& c, const ResponseId& id) {
  const GenerationResult& r = c.result;
  return {{"cache_n", c.cached_tokens},
          {"prompt_n", r.prefill_tokens},
          {"prompt_ms", r.prefill_seconds * 1e3},
          {"prompt_per_second", r.prefill_tokens / std::max(r.prefill_seconds, 1e-9)},
          {"predicted_n", c.completion_tokens()},
          {"predicted_ms", r.decode_seconds * 1e3},
          {"predicted_per_second", r.decode_tokens / std::max(r.decode_seconds, 1e-9)},
          {"queue_ticket", id.ticket},
          {"served_as", id.served}};
}

json response_json(const ApiRequest& r, const ResponseId& id, const Completion& c, const json& logprobs,
                   const ParsedOutput* calls) {
  json out = envelope(r, id, false);
  const bool called = calls && !calls->tool_calls.empty();
  json choice = {{"index", 0}, {"logprobs", logprobs},
                 {"finish_reason", called ? "tool_calls" : openai_finish(c.finish_reason)}};
  if (r.endpoint == Endpoint::Chat) {
    json message = {{"role", "assistant"}, {"content", calls ? calls->content : c.text.content}};
    if (called) {
      if (calls->content.empty()) message["content"] = nullptr;
      json list = json::array();
      for (const ToolCall& call : calls->tool_calls)
        list.push_back({{"id", call.id}, {"type", "function"},
                        {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      message["tool_calls"] = list;
    }
    if (!c.text.reasoning.empty()) message["reasoning_content"] = c.text.reasoning;
    choice["message"] = message;
  } else {
    choice["text"] = c.text.reasoning + c.text.content;
  }
  out["choices"] = json::array({choice});
  out["usage"] = usage_json(c);
  out["timings"] = timings_json(c, id);
  return out;
}

json chunk_json(const ApiRequest& r, const ResponseId& id, const TextParts& parts, const char* finish_reason,
                const json& logprobs) {
  json out = envelope(r, id, true);
  json choice = {{"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish_value(finish_reason)}};
  if (r.endpoint == Endpoint::Chat) {
    json delta = json::object();
    if (!parts.reasoning.empty()) delta["reasoning_content"] = parts.reasoning;
    if (!parts.content.empty()) delta["content"] = parts.content;
    choice["delta"] = delta;
  } else {
    choice["text"] = parts.reasoning + parts.content;
  }
  out["choices"] = json::array({choice});
  return out;
}

json delta_chunk_json(const ApiRequest& r, const ResponseId& id, const json& delta, const char* finish_reason,
                      const json& logprobs) {
  json out = envelope(r, id, true);
  out["choices"] = json::array(
      {{{"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish_value(finish_reason)}, {"delta", delta}}});
  return out;
}

json role_chunk_json(const ResponseId& id) {
  ApiRequest chat;
  json out = envelope(chat, id, true);
  out["choices"] = json::array(
      {{{"index", 0}, {"logprobs", nullptr}, {"finish_reason", nullptr}, {"delta", {{"role", "assistant"}, {"content", ""}}}}});
  return out;
}

json usage_chunk_json(const ApiRequest& r, const ResponseId& id, const Completion& c) {
  json out = envelope(r, id, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(c);
  out["timings"] = timings_json(c, id);
  return out;
}

std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& j) { return "data: " + json_text(j) + "\n\n"; }

}  // namespace r1pi
