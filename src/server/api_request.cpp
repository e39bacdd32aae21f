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

std::string at(size_t index, const char* field) {
  return "messages[" + std::to_string(index) + "]." + field;
}

std::string string_field(const json& m, const std::string& where, const char* field) {
  const json& v = m[field];
  if (!v.is_string()) bad("'" + where + "' must be a string");
  return v.get<std::string>();
}

// An assistant's tool_calls as OpenAI sends them back: {id, type: "function", function: {name,
// arguments}}, arguments the JSON text of an object (an object itself is taken too).
using ordered_json = nlohmann::ordered_json;

std::vector<ToolCall> read_tool_calls(const json& calls, const ordered_json& in_order, size_t index) {
  const std::string where = at(index, "tool_calls");
  if (!calls.is_array()) bad("'" + where + "' must be a list");
  std::vector<ToolCall> out;
  for (size_t k = 0; k < calls.size(); ++k) {
    const json& c = calls[k];
    const std::string here = where + "[" + std::to_string(k) + "]";
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
      bad("'" + here + "' must be {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}");
    const json& f = c["function"];
    ToolCall call;
    call.id = has(c, "id") ? string_field(c, here + ".id", "id") : "";
    call.name = has(f, "name") ? string_field(f, here + ".function.name", "name") : "";
    if (call.name.empty()) bad("'" + here + ".function.name' is required");
    // In the order the client wrote them: a template shows them so.
    const ordered_json args = in_order[k]["function"].value("arguments", ordered_json::object());
    const ordered_json parsed = args.is_string() ? ordered_json::parse(args.get<std::string>(), nullptr, false) : args;
    if (!parsed.is_object()) bad("'" + here + ".function.arguments' must be a JSON object (or its text)");
    call.arguments = parsed.dump();
    out.push_back(std::move(call));
  }
  return out;
}

std::vector<ChatMessage> read_messages(const json& body, const ordered_json& in_order) {
  if (!body.contains("messages")) bad("'messages' is required");
  const json& list = body["messages"];
  if (!list.is_array() || list.empty()) bad("'messages' must be a non-empty list");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& m = list[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad("'messages[" + std::to_string(i) + "]' must be an object with a string 'role'");
    ChatMessage message;
    message.role = m["role"].get<std::string>();
    if (!known_chat_role(message.role))
      bad("'" + at(i, "role") + "' is '" + message.role + "': r1pi takes system, developer, user, assistant and tool");
    const bool assistant = message.role == "assistant";
    // An assistant turn may come without text (OpenAI's null content beside tool_calls); others may not.
    if (!assistant && (!m.contains("content") || m["content"].is_null()))
      bad("'" + at(i, "content") + "' is required (a " + message.role + " message without text)");
    message.content = content_text(m.value("content", json()), i);
    if (assistant && has(m, "tool_calls"))
      message.tool_calls = read_tool_calls(m["tool_calls"], in_order["messages"][i]["tool_calls"], i);
    if (assistant && has(m, "reasoning_content"))
      message.reasoning_content = string_field(m, at(i, "reasoning_content"), "reasoning_content");
    if (message.role == "tool") {
      if (!has(m, "tool_call_id")) bad("'" + at(i, "tool_call_id") + "' is required (the call this result answers)");
      message.tool_call_id = string_field(m, at(i, "tool_call_id"), "tool_call_id");
    }
    if (has(m, "name")) message.name = string_field(m, at(i, "name"), "name");
    messages.push_back(std::move(message));
  }
  return messages;
}

// OpenAI's tools: [{type: "function", function: {name, description?, parameters?}}], kept as given
// for the template (which renders them) and the grammar of a forced call.
ordered_json read_tools(const json& body, const ordered_json& in_order) {
  if (!has(body, "tools")) return ordered_json();
  const json& tools = body["tools"];
  if (!tools.is_array()) bad("'tools' must be a list of {\"type\": \"function\", \"function\": {...}}");
  for (size_t k = 0; k < tools.size(); ++k) {
    const json& t = tools[k];
    const std::string where = "tools[" + std::to_string(k) + "]";
    if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") || !t["function"].is_object())
      bad("'" + where + "' must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
    const json& f = t["function"];
    if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty())
      bad("'" + where + ".function.name' must be a non-empty string");
    if (has(f, "parameters") && !f["parameters"].is_object())
      bad("'" + where + ".function.parameters' must be a JSON Schema object");
    if (has(f, "description") && !f["description"].is_string())
      bad("'" + where + ".function.description' must be a string");
  }
  return in_order["tools"];
}

void read_tool_choice(const json& body, ApiRequest& r) {
  if (!has(body, "tool_choice")) return;
  const json& c = body["tool_choice"];
  if (c.is_string()) {
    const std::string mode = c.get<std::string>();
    if (mode == "auto") r.tool_choice = ToolChoice::Auto;
    else if (mode == "none") r.tool_choice = ToolChoice::None;
    else if (mode == "required") r.tool_choice = ToolChoice::Required;
    else bad("'tool_choice' is '" + mode + "': give auto, none, required or {\"type\": \"function\", ...}");
  } else if (c.is_object() && c.value("type", "") == "function" && c.contains("function") &&
             c["function"].is_object() && c["function"].contains("name") && c["function"]["name"].is_string()) {
    r.tool_choice = ToolChoice::Function;
    r.tool_choice_name = c["function"]["name"].get<std::string>();
  } else {
    bad("'tool_choice' must be auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  }
  if (r.tool_choice == ToolChoice::Required || r.tool_choice == ToolChoice::Function) {
    if (r.tools.is_null() || r.tools.empty()) bad("'tool_choice' asks for a tool call, but 'tools' gives none");
  }
  if (r.tool_choice == ToolChoice::Function) {
    const bool given = std::any_of(r.tools.begin(), r.tools.end(), [&](const json& t) {
      return t["function"]["name"] == r.tool_choice_name;
    });
    if (!given) bad("'tool_choice' names '" + r.tool_choice_name + "', which is not in 'tools'");
  }
}

// The answer's shape: response_format (json_object, json_schema), llama.cpp's json_schema or its
// GBNF grammar; one of them. The grammar and schema are checked when the engine compiles them.
void read_constraint(const json& body, const ordered_json& in_order, ApiRequest& r) {
  int given = 0;
  if (has(body, "grammar")) {
    ++given;
    if (!body["grammar"].is_string()) bad("'grammar' must be a string (GBNF)");
    r.grammar = body["grammar"].get<std::string>();
  }
  if (has(body, "json_schema")) {
    ++given;
    if (!body["json_schema"].is_object() && !body["json_schema"].is_boolean())
      bad("'json_schema' must be a JSON Schema object");
    r.json_schema = in_order["json_schema"];
  }
  if (has(body, "response_format")) {
    const json& f = body["response_format"];
    if (!f.is_object() || !f.contains("type") || !f["type"].is_string())
      bad("'response_format' must be {\"type\": \"text\" | \"json_object\" | \"json_schema\", ...}");
    const std::string type = f["type"].get<std::string>();
    if (type == "json_object") {
      ++given;
      // llama-server's extension: a schema beside json_object.
      r.json_schema = has(f, "schema") ? in_order["response_format"]["schema"] : ordered_json{{"type", "object"}};
    } else if (type == "json_schema") {
      ++given;
      if (!has(f, "json_schema") || !f["json_schema"].is_object())
        bad("'response_format.json_schema' must be {\"name\", \"schema\", \"strict\"}");
      const json& js = f["json_schema"];
      if (has(js, "name") && !js["name"].is_string()) bad("'response_format.json_schema.name' must be a string");
      if (has(js, "strict") && !js["strict"].is_boolean()) bad("'response_format.json_schema.strict' must be true or false");
      if (!has(js, "schema")) bad("'response_format.json_schema.schema' is required");
      if (!js["schema"].is_object()) bad("'response_format.json_schema.schema' must be a JSON Schema object");
      r.json_schema = in_order["response_format"]["json_schema"]["schema"];
    } else if (type != "text") {
      bad("'response_format.type' is '" + type + "': give text, json_object or json_schema");
    }
  }
  if (given > 1) bad("give one of 'grammar', 'json_schema' and 'response_format' (json_object, json_schema)");
}

// logprobs / top_logprobs (OpenAI's chat), logprobs as a count (its legacy completions), n_probs
// (llama.cpp's): how many alternatives each token reports (0: the token's own only).
int read_logprobs(const json& body, Endpoint endpoint) {
  int n = -1;
  if (has(body, "logprobs")) {
    const json& l = body["logprobs"];
    if (l.is_boolean()) n = l.get<bool>() ? 0 : -1;
    else if (endpoint == Endpoint::Completion && l.is_number_integer()) n = int(integer_in(body, "logprobs", 0, 20));
    else bad(endpoint == Endpoint::Chat ? "'logprobs' must be true or false" : "'logprobs' must be an integer from 0 to 20");
  }
  if (has(body, "top_logprobs")) {
    if (n < 0) bad("'top_logprobs' needs 'logprobs': true");
    n = int(integer_in(body, "top_logprobs", 0, 20));
  }
  if (has(body, "n_probs")) {
    const int probs = int(integer_in(body, "n_probs", 0, 20));
    if (probs > 0) n = std::max(n, probs);
  }
  return n;
}

// logit_bias: OpenAI's {"id": bias} or llama.cpp's [[id, bias], ...]; a bias from -100 to 100, or
// false (llama.cpp's "never": -inf). Ids are checked against the vocabulary by the server.
std::vector<std::pair<int32_t, float>> read_logit_bias(const json& body) {
  if (!has(body, "logit_bias")) return {};
  const json& b = body["logit_bias"];
  std::vector<std::pair<int32_t, float>> out;
  auto add = [&](const std::string& key, const json& id_json, const json& bias) {
    int64_t id = -1;
    if (id_json.is_number_integer()) {
      id = id_json.get<int64_t>();
    } else if (id_json.is_string()) {
      const std::string text = id_json.get<std::string>();
      char* end = nullptr;
      id = text.empty() ? -1 : std::strtoll(text.c_str(), &end, 10);
      if (end == nullptr || *end != '\0') id = -1;
    }
    if (id < 0 || id > INT32_MAX) bad("'logit_bias' key " + key + " is not a token id");
    float value;
    if (bias.is_boolean() && !bias.get<bool>()) value = -INFINITY;
    else if (bias.is_number() && std::isfinite(bias.get<double>()) && std::fabs(bias.get<double>()) <= 100)
      value = bias.get<float>();
    else bad("'logit_bias' for " + key + " must be a number from -100 to 100 (or false: never)");
    out.emplace_back(int32_t(id), value);
  };
  if (b.is_object()) {
    for (const auto& [key, bias] : b.items()) add("'" + key + "'", json(key), bias);
  } else if (b.is_array()) {
    for (const json& pair : b) {
      if (!pair.is_array() || pair.size() != 2) bad("'logit_bias' as a list holds [id, bias] pairs");
      add(pair[0].dump(), pair[0], pair[1]);
    }
  } else {
    bad("'logit_bias' must be an object {\"id\": bias} or a list of [id, bias]");
  }
  return out;
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

// llama-server's chat_template_kwargs: the variables the model's template gets (enable_thinking,
// Qwen3's, among them: the named templates read that one).
void read_template_kwargs(const json& body, const ordered_json& in_order, ApiRequest& r) {
  if (!has(body, "chat_template_kwargs")) return;
  const json& kwargs = body["chat_template_kwargs"];
  if (!kwargs.is_object()) bad("'chat_template_kwargs' must be an object");
  r.template_kwargs = in_order["chat_template_kwargs"];
  if (!has(kwargs, "enable_thinking")) return;
  if (!kwargs["enable_thinking"].is_boolean()) bad("'chat_template_kwargs.enable_thinking' must be true or false");
  r.enable_thinking = kwargs["enable_thinking"].get<bool>();
}

// OpenAI's reasoning_effort: the template's variable of that name (harmony's system message says
// it); harmony knows low, medium and high.
void read_reasoning_effort(const json& body, ApiRequest& r) {
  if (!has(body, "reasoning_effort")) return;
  const json& effort = body["reasoning_effort"];
  if (!effort.is_string() || !known_reasoning_effort(effort.get<std::string>()))
    bad("'reasoning_effort' must be one of " + std::string(kReasoningEfforts));
  if (r.template_kwargs.is_null()) r.template_kwargs = ordered_json::object();
  r.template_kwargs["reasoning_effort"] = effort.get<std::string>();
}

}  // namespace

ApiRequest parse_api_request(Endpoint endpoint, std::string_view text, const SamplerParams& defaults) {
  const json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) bad("the body is not valid JSON");
  if (!body.is_object()) bad("the body must be a JSON object");
  // The same body with its objects in the order written (json sorts them by key), for what a
  // template or a grammar shows in order: tools, schemas, arguments, template variables.
  const ordered_json in_order = ordered_json::parse(text, nullptr, false);
  ApiRequest r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::Chat) {
    r.messages = read_messages(body, in_order);
    read_template_kwargs(body, in_order, r);
    read_reasoning_effort(body, r);
    r.tools = read_tools(body, in_order);
    read_tool_choice(body, r);
    r.parallel_tool_calls = !has(body, "parallel_tool_calls") || flag(body, "parallel_tool_calls");
  } else {
    r.prompt = read_prompt(body);
    r.parse_special = flag(body, "parse_special");
  }
  if (has(body, "user")) {
    if (!body["user"].is_string()) bad("'user' must be a string");
    r.user = body["user"].get<std::string>();
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
  r.sampler.logit_bias = read_logit_bias(body);
  r.sampler.n_probs = read_logprobs(body, endpoint);
  read_constraint(body, in_order, r);
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
