#include "server/api_request.h"

#include <nlohmann/json.hpp>

#include <random>

#include "server/api_error.h"
#include "server/json_fields.h"

namespace r1pi {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& message) { throw ApiError(400, message); }

// A message's content: a string, or OpenAI's list of parts of which r1pi reads the text ones.
std::string content_text(const json& content, size_t index) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  const std::string where = "messages[" + std::to_string(index) + "].content";
  if (!content.is_array()) bad("'" + where + "' must be a string or a list of text parts");
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      bad("'" + where + "' holds a part that is not {\"type\": \"text\", \"text\": ...}");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<ChatMessage> read_messages(const json& body) {
  if (!body.contains("messages")) bad("'messages' is required");
  const json& list = body["messages"];
  if (!list.is_array() || list.empty()) bad("'messages' must be a non-empty list");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& m = list[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad("'messages[" + std::to_string(i) + "]' must be an object with a string 'role'");
    const std::string role = m["role"].get<std::string>();
    if (!known_chat_role(role))
      bad("'messages[" + std::to_string(i) + "].role' is '" + role + "': r1pi takes system, user and assistant");
    // An assistant turn may come without text (OpenAI's null content); a system or user one may not.
    if (role != "assistant" && (!m.contains("content") || m["content"].is_null()))
      bad("'messages[" + std::to_string(i) + "].content' is required (a " + role + " message without text)");
    messages.push_back({role, content_text(m.value("content", json()), i)});
  }
  return messages;
}

std::string read_prompt(const json& body) {
  if (!body.contains("prompt")) bad("'prompt' is required");
  const json& p = body["prompt"];
  if (p.is_string()) return p.get<std::string>();
  if (p.is_array() && p.size() == 1 && p[0].is_string()) return p[0].get<std::string>();
  bad("'prompt' must be a string (or a list of one string)");
}

std::vector<std::string> read_stop(const json& body) {
  if (!has(body, "stop")) return {};
  const json& s = body["stop"];
  if (s.is_string()) return {s.get<std::string>()};
  if (!s.is_array() || s.size() > 16) bad("'stop' must be a string or a list of at most 16 strings");
  std::vector<std::string> stops;
  for (const json& one : s) {
    if (!one.is_string()) bad("'stop' must be a string or a list of strings");
    stops.push_back(one.get<std::string>());
  }
  return stops;
}

// llama-server's chat_template_kwargs: the variables its Jinja template gets. r1pi's templates
// read one, enable_thinking (Qwen3's); the others are ignored, as a template ignores what it does
// not use.
std::optional<bool> read_enable_thinking(const json& body) {
  if (!has(body, "chat_template_kwargs")) return std::nullopt;
  const json& kwargs = body["chat_template_kwargs"];
  if (!kwargs.is_object()) bad("'chat_template_kwargs' must be an object");
  if (!has(kwargs, "enable_thinking")) return std::nullopt;
  if (!kwargs["enable_thinking"].is_boolean()) bad("'chat_template_kwargs.enable_thinking' must be true or false");
  return kwargs["enable_thinking"].get<bool>();
}

}  // namespace

ApiRequest parse_api_request(Endpoint endpoint, std::string_view text, const SamplerParams& defaults) {
  const json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) bad("the body is not valid JSON");
  if (!body.is_object()) bad("the body must be a JSON object");
  ApiRequest r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::Chat) {
    r.messages = read_messages(body);
    r.enable_thinking = read_enable_thinking(body);
  } else {
    r.prompt = read_prompt(body);
  }
  if (has(body, "n") && integer_in(body, "n", 1, 1) != 1) bad("'n' must be 1");
  for (const char* field : {"max_completion_tokens", "max_tokens"})
    if (has(body, field)) r.max_tokens = int(integer_in(body, field, 1, 1 << 24));
  r.sampler = defaults;
  if (has(body, "temperature")) r.sampler.temperature = float(number_in(body, "temperature", 0, 100));
  if (has(body, "top_p")) r.sampler.top_p = float(number_in(body, "top_p", 0, 1));
  if (has(body, "min_p")) r.sampler.min_p = float(number_in(body, "min_p", 0, 1));
  if (has(body, "top_k")) r.sampler.top_k = int(integer_in(body, "top_k", 0, 1 << 30));
  // The repetition penalties: OpenAI's two (its range) and llama-server's two.
  PenaltyParams& penalties = r.sampler.penalties;
  if (has(body, "frequency_penalty")) penalties.frequency = float(number_in(body, "frequency_penalty", -2, 2));
  if (has(body, "presence_penalty")) penalties.presence = float(number_in(body, "presence_penalty", -2, 2));
  if (has(body, "repeat_penalty")) {
    penalties.repeat = float(number_in(body, "repeat_penalty", 0, 10));
    if (penalties.repeat == 0.0f) bad("'repeat_penalty' must be above 0 (1: off)");
  }
  if (has(body, "repeat_last_n")) penalties.last_n = int32_t(integer_in(body, "repeat_last_n", -1, 1 << 24));
  if (has(body, "seed")) {
    const json& seed = body["seed"];
    if (seed.is_number_unsigned()) r.sampler.seed = seed.get<uint64_t>();
    else if (seed.is_number_integer() && seed.get<int64_t>() == -1) r.sampler.seed = std::random_device{}();
    else bad("'seed' must be an integer from 0 to 2^64-1 (or -1: random)");
  } else {
    r.sampler.seed = std::random_device{}();
  }
  r.stop = read_stop(body);
  r.stream = flag(body, "stream");
  r.ignore_eos = flag(body, "ignore_eos");
  if (has(body, "stream_options")) {
    if (!body["stream_options"].is_object()) bad("'stream_options' must be an object");
    r.include_usage = flag(body["stream_options"], "include_usage");
  }
  return r;
}

}  // namespace r1pi
