// Anthropic's Messages API on r1pi's structs, without a model: requests read into ApiRequest (each
// mapping and each refusal), answers in Anthropic's shapes, the streamed events checked against the
// order Anthropic documents and accumulated as its SDKs accumulate them (the streamed message must
// equal the whole one), errors, count_tokens, and the x-api-key header.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/anthropic_request.h"
#include "server/anthropic_response.h"
#include "server/api_key.h"

namespace r1pi {
namespace {

using nlohmann::ordered_json;

ApiRequest parse(const std::string& body, AnthropicRoute route = AnthropicRoute::Messages) {
  return parse_anthropic_request(route, body, SamplerParams{});
}

// A request body: the given fields (JSON object text, without braces) after model and max_tokens.
std::string body_with(const std::string& fields) {
  return R"({"model": "r1pi", "max_tokens": 64)" + (fields.empty() ? "" : ", " + fields) + "}";
}
const std::string kHi = R"("messages": [{"role": "user", "content": "hi"}])";

// The 400's message, or "" when the body is accepted.
std::string refusal(const std::string& body, AnthropicRoute route = AnthropicRoute::Messages) {
  try {
    parse(body, route);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << body;
    return e.what();
  }
  return "";
}

TEST(AnthropicRequest, ReadsTheFields) {
  const ApiRequest r = parse(R"({"model": "r1pi", "max_tokens": 2048, )" + kHi + R"(, "system": "Be brief.", "stop_sequences": ["END", "STOP"],
      "temperature": 0.5, "top_p": 0.9, "top_k": 7, "stream": true, "metadata": {"user_id": "u-1"},
      "service_tier": "auto", "thinking": {"type": "enabled", "budget_tokens": 1024}})");
  EXPECT_EQ(r.endpoint, Endpoint::Chat);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "Be brief.");
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_EQ(r.messages[1].content, "hi");
  EXPECT_EQ(r.max_tokens, 2048);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"END", "STOP"}));
  EXPECT_EQ(r.sampler.temperature, 0.5f);
  EXPECT_EQ(r.sampler.top_p, 0.9f);
  EXPECT_EQ(r.sampler.top_k, 7);
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.user, "u-1");
  EXPECT_EQ(r.enable_thinking, true);
  EXPECT_TRUE(r.tools.is_null());
}

TEST(AnthropicRequest, DefaultsAreTheServers) {
  SamplerParams defaults;
  defaults.temperature = 0.6f;
  defaults.top_p = 0.95f;
  const ApiRequest r = parse_anthropic_request(AnthropicRoute::Messages, body_with(kHi), defaults);
  EXPECT_EQ(r.sampler.temperature, 0.6f);
  EXPECT_EQ(r.sampler.top_p, 0.95f);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.enable_thinking, std::nullopt);
  EXPECT_TRUE(r.stop.empty());
  ASSERT_EQ(r.messages.size(), 1u);  // no system prompt given, none added
  EXPECT_EQ(parse(body_with(kHi + R"(, "thinking": {"type": "disabled"})")).enable_thinking, false);
}

TEST(AnthropicRequest, SystemAsTextBlocks) {
  const ApiRequest r = parse(body_with(
      kHi + R"(, "system": [{"type": "text", "text": "One. "}, {"type": "text", "text": "Two.", "cache_control": {"type": "ephemeral"}}])"));
  EXPECT_EQ(r.messages[0].content, "One. Two.");
}

TEST(AnthropicRequest, ContentBlocksMapOntoMessages) {
  const ApiRequest r = parse(body_with(R"("messages": [
      {"role": "user", "content": [{"type": "text", "text": "Weather in "}, {"type": "text", "text": "Oslo?"}]},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Use the tool.", "signature": "abc"},
        {"type": "redacted_thinking", "data": "xyz"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo", "days": [1, 2]}},
        {"type": "tool_use", "id": "toolu_2", "name": "time", "input": {}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "rain"}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "noon", "is_error": false},
        {"type": "text", "text": "Umbrella?"}]},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_3", "name": "time", "input": {"zone": "CET"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "down", "is_error": true}]}
      ])"));
  ASSERT_EQ(r.messages.size(), 7u);
  EXPECT_EQ(r.messages[0].role, "user");
  EXPECT_EQ(r.messages[0].content, "Weather in Oslo?");
  const ChatMessage& answer = r.messages[1];
  EXPECT_EQ(answer.role, "assistant");
  EXPECT_EQ(answer.content, "Looking.");
  EXPECT_EQ(answer.reasoning_content, "Use the tool.");
  ASSERT_EQ(answer.tool_calls.size(), 2u);
  EXPECT_EQ(answer.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(answer.tool_calls[0].name, "weather");
  EXPECT_EQ(answer.tool_calls[0].arguments, R"({"city":"Oslo","days":[1,2]})");  // compact, the client's order
  EXPECT_EQ(answer.tool_calls[1].arguments, "{}");
  // Two results, in order, before the text of the message that carried them.
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(r.messages[i].role, "tool");
    EXPECT_EQ(r.messages[i].tool_call_id, answer.tool_calls[i - 2].id);
    EXPECT_EQ(r.messages[i].name, answer.tool_calls[i - 2].name);
  }
  EXPECT_EQ(r.messages[2].content, "rain");
  EXPECT_EQ(r.messages[3].content, "noon");
  EXPECT_EQ(r.messages[4].role, "user");
  EXPECT_EQ(r.messages[4].content, "Umbrella?");
  EXPECT_EQ(r.messages[5].tool_calls.at(0).arguments, R"({"zone":"CET"})");
  EXPECT_EQ(r.messages[5].content, "");
  // A message of results alone adds no user message; a failed call says so in its text.
  EXPECT_EQ(r.messages[6].role, "tool");
  EXPECT_EQ(r.messages[6].content, "Error: down");
}

TEST(AnthropicRequest, ToolsBecomeOpenAIFunctions) {
  const ApiRequest r = parse(body_with(kHi + R"(, "tools": [
      {"name": "weather", "description": "Today's weather.",
       "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
      {"type": "custom", "name": "time", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}])"));
  EXPECT_EQ(r.tools, ordered_json::parse(R"([
      {"type": "function", "function": {"name": "weather", "description": "Today's weather.",
       "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
      {"type": "function", "function": {"name": "time", "parameters": {"type": "object"}}}])"));
  // The schema keeps the client's key order ("type" before "properties"), as the template renders it.
  EXPECT_EQ(r.tools[0]["function"]["parameters"].dump(),
            R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
  EXPECT_EQ(r.tool_choice, ToolChoice::Auto);
  EXPECT_TRUE(r.parallel_tool_calls);
  EXPECT_TRUE(parse(body_with(kHi + R"(, "tools": [])")).tools.is_null());
}

TEST(AnthropicRequest, ToolChoice) {
  const std::string tools = kHi + R"(, "tools": [{"name": "time", "input_schema": {"type": "object"}}], "tool_choice": )";
  auto choice = [&](const std::string& c) { return parse(body_with(tools + c)); };
  EXPECT_EQ(choice(R"({"type": "auto"})").tool_choice, ToolChoice::Auto);
  EXPECT_EQ(choice(R"({"type": "none"})").tool_choice, ToolChoice::None);
  const ApiRequest any = choice(R"({"type": "any", "disable_parallel_tool_use": true})");
  EXPECT_EQ(any.tool_choice, ToolChoice::Required);
  EXPECT_FALSE(any.parallel_tool_calls);
  const ApiRequest tool = choice(R"({"type": "tool", "name": "time"})");
  EXPECT_EQ(tool.tool_choice, ToolChoice::Function);
  EXPECT_EQ(tool.tool_choice_name, "time");
  EXPECT_TRUE(tool.parallel_tool_calls);
}

TEST(AnthropicRequest, CountTokensNeedsNoMaxTokens) {
  const std::string body = "{\"model\": \"r1pi\", " + kHi + "}";
  EXPECT_EQ(refusal(body), "'max_tokens' is required");
  const ApiRequest r = parse(body, AnthropicRoute::CountTokens);
  EXPECT_EQ(r.max_tokens, -1);
  ASSERT_EQ(r.messages.size(), 1u);
  // The body a client sends to /v1/messages counts as it is.
  EXPECT_EQ(refusal(body_with(kHi), AnthropicRoute::CountTokens), "");
}

// Every refusal names the field, in the words a client sees.
TEST(AnthropicRequest, RefusesWhatAnthropicRefuses) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "the body is not valid JSON"},
      {"[1]", "the body must be a JSON object"},
      {"{\"max_tokens\": 5, " + kHi + "}", "'model' is required"},
      {"{\"model\": 5, \"max_tokens\": 5, " + kHi + "}", "'model' must be a string"},
      {body_with(""), "'messages' is required"},
      {R"({"model": "m", "max_tokens": 0, "messages": []})", "'max_tokens' must be an integer from 1 to 16777216"},
      {body_with(R"("messages": [])"), "'messages' must be a non-empty list"},
      {body_with(R"("messages": ["hi"])"), "'messages[0]' must be an object with a 'role' and a 'content'"},
      {body_with(R"("messages": [{"role": "system", "content": "x"}])"),
       "'messages[0].role' is 'system': the Messages API takes user and assistant (the system prompt is the top-level 'system')"},
      {body_with(R"("messages": [{"role": "user"}])"), "'messages[0].content' is required"},
      {body_with(R"("messages": [{"role": "user", "content": 5}])"),
       "'messages[0].content' must be a string or a list of content blocks"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}])"),
       "'messages[0].content[0]' is an image block: r1pi takes text only"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "document", "source": {}}]}])"),
       "'messages[0].content[0]' is a document block: r1pi takes text only"},
      {body_with(R"("messages": [{"role": "user", "content": [{"text": "x"}]}])"), "'messages[0].content[0].type' must be a string"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}])"),
       "'messages[0].content[0].text' must be a string"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}])"),
       "'messages[0].content[0].type' is 'thinking': a user message takes text and tool_result blocks"},
      {body_with(R"("messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]}, {"role": "user", "content": "x"}])"),
       "'messages[1].content[0].type' is 'tool_result': an assistant message takes text, thinking, redacted_thinking and tool_use blocks"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "search_result"}]}])"),
       "'messages[0].content[0].type' is 'search_result': a user message takes text and tool_result blocks"},
      {body_with(R"("messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}])"),
       "'messages[0].content[0].tool_use_id' is 'toolu_9': no tool_use block of the assistant message before has that id"},
      {body_with(R"("messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}]}, {"role": "user", "content": "x"}])"),
       "'messages[1].content[0].input' must be an object"},
      {body_with(R"("messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image"}]}]}])"),
       "'messages[2].content[0].content[0]' is an image block: r1pi takes text only"},
      {body_with(R"("messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "The answer is"}])"),
       "'messages' ends with an assistant message: r1pi answers after a user message (no prefill)"},
      {body_with(kHi + R"(, "system": [{"type": "image"}])"), "'system[0]' is an image block: r1pi takes text only"},
      {body_with(kHi + R"(, "system": 5)"), "'system' must be a string or a list of text blocks"},
      {body_with(kHi + R"(, "temperature": 1.5)"), "'temperature' must be a number from 0.0 to 1.0"},
      {body_with(kHi + R"(, "top_p": -0.1)"), "'top_p' must be a number from 0.0 to 1.0"},
      {body_with(kHi + R"(, "top_k": 2.5)"), "'top_k' must be an integer from 0 to 1073741824"},
      {body_with(kHi + R"(, "stream": "yes")"), "'stream' must be true or false"},
      {body_with(kHi + R"(, "stop_sequences": "END")"), "'stop_sequences' must be a list of strings"},
      {body_with(kHi + R"(, "stop_sequences": [1])"), "'stop_sequences' must be a list of strings"},
      {body_with(kHi + R"(, "tools": {})"), "'tools' must be a list of tools"},
      {body_with(kHi + R"(, "tools": [{"name": "f"}])"), "'tools[0].input_schema' must be an object (a JSON schema)"},
      {body_with(kHi + R"(, "tools": [{"type": "web_search_20250305", "name": "web_search"}])"),
       "'tools[0].type' is \"web_search_20250305\": r1pi runs no server tools (give custom tools: name, description, input_schema)"},
      {body_with(kHi + R"(, "tools": [{"name": "a b", "input_schema": {}}])"),
       "'tools[0].name' must be 1 to 128 letters, digits, '_' or '-'"},
      {body_with(kHi + R"(, "tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}])"),
       "'tools[1].name' 'f' is given twice"},
      {body_with(kHi + R"(, "tools": [{"name": "f", "description": 1, "input_schema": {}}])"),
       "'tools[0].description' must be a string"},
      {body_with(kHi + R"(, "tool_choice": "auto")"), "'tool_choice.type' must be a string"},
      {body_with(kHi + R"(, "tool_choice": {"type": "required"})"), "'tool_choice.type' is 'required': give auto, any, tool or none"},
      {body_with(kHi + R"(, "tool_choice": {"type": "any"})"), "'tool_choice' any needs 'tools'"},
      {body_with(kHi + R"(, "tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool"})"),
       "'tool_choice.name' must be a string"},
      {body_with(kHi + R"(, "tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "g"})"),
       "'tool_choice.name' is 'g': no tool of 'tools' has that name"},
      {body_with(kHi + R"(, "tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"})"),
       "'tool_choice.disable_parallel_tool_use' must be true or false"},
      {body_with(kHi + R"(, "thinking": {"type": "on"})"), "'thinking.type' is 'on': give enabled or disabled"},
      {body_with(kHi + R"(, "thinking": true)"), "'thinking.type' must be a string"},
      {body_with(kHi + R"(, "thinking": {"type": "enabled"})"), "'thinking.budget_tokens' is required when thinking is enabled"},
      {body_with(kHi + R"(, "thinking": {"type": "enabled", "budget_tokens": 100})"),
       "'thinking.budget_tokens' must be an integer from 1024 to 16777216"},
      {R"({"model": "m", "max_tokens": 1024, )" + kHi + R"(, "thinking": {"type": "enabled", "budget_tokens": 1024}})",
       "'thinking.budget_tokens' must be less than 'max_tokens'"},
      {body_with(kHi + R"(, "metadata": "u")"), "'metadata' must be an object"},
      {body_with(kHi + R"(, "metadata": {"user_id": 5})"), "'metadata.user_id' must be a string"},
      {body_with(kHi + R"(, "service_tier": "priority")"), "'service_tier' is 'priority': give auto or standard_only"},
      {body_with(kHi + R"(, "seed": 5)"), "'seed' is not a field r1pi's Messages API takes"},
      {body_with(kHi + R"(, "container": "c")"), "'container' is not a field r1pi's Messages API takes"},
  };
  for (const auto& [body, message] : cases) EXPECT_EQ(refusal(body), message) << body;
  // Null is a field left out.
  EXPECT_EQ(refusal(body_with(kHi + R"(, "system": null, "tools": null, "temperature": null, "metadata": {"user_id": null})")), "");
}

Completion completion(const std::string& reasoning, const std::string& content, const std::string& finish = "stop") {
  Completion c;
  c.text = {reasoning, content};
  c.finish_reason = finish;
  c.result.generated = {5, 6, 7};
  c.prompt_tokens = 12;
  c.cached_tokens = 4;
  return c;
}

const ResponseId kId{"msg_r1pi1-7", 1, "r1pi-model"};

TEST(AnthropicResponse, TextAnswer) {
  EXPECT_EQ(anthropic_message_json(kId, completion("", "Hello."), {}), ordered_json::parse(R"({
      "id": "msg_r1pi1-7", "type": "message", "role": "assistant", "model": "r1pi-model",
      "content": [{"type": "text", "text": "Hello."}],
      "stop_reason": "end_turn", "stop_sequence": null,
      "usage": {"input_tokens": 8, "output_tokens": 3, "cache_read_input_tokens": 4}})"));
}

TEST(AnthropicResponse, ThinkingTextAndToolUse) {
  const AnthropicEnding ending{{{"toolu_a", "weather", R"({"city": "Oslo", "days": 2})"}, {"", "time", "{}"}}, std::nullopt};
  const ordered_json m = anthropic_message_json(kId, completion("Need the tool.", "Checking."), ending);
  EXPECT_EQ(m["content"], ordered_json::parse(R"([
      {"type": "thinking", "thinking": "Need the tool.", "signature": ""},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {"city": "Oslo", "days": 2}},
      {"type": "tool_use", "id": "toolu_r1pi1-7_1", "name": "time", "input": {}}])"));
  EXPECT_EQ(m["content"][2]["input"].dump(), R"({"city":"Oslo","days":2})");  // the model's key order
  EXPECT_EQ(m["stop_reason"], "tool_use");
  // Nothing but the calls: no empty text block.
  EXPECT_EQ(anthropic_message_json(kId, completion("", ""), ending)["content"].size(), 2u);
  EXPECT_EQ(anthropic_message_json(kId, completion("", ""), {})["content"], ordered_json::array());
}

TEST(AnthropicResponse, StopReasons) {
  EXPECT_STREQ(anthropic_stop_reason(completion("", "x", "length"), {}), "max_tokens");
  EXPECT_STREQ(anthropic_stop_reason(completion("", "x"), {}), "end_turn");
  const AnthropicEnding stopped{{}, "END"};
  EXPECT_STREQ(anthropic_stop_reason(completion("", "x"), stopped), "stop_sequence");
  const ordered_json m = anthropic_message_json(kId, completion("", "x"), stopped);
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
}

TEST(AnthropicResponse, ArgumentsThatAreNoObjectAreAServerError) {
  for (const char* arguments : {"{\"a\": ", "[1]", ""}) {
    try {
      anthropic_message_json(kId, completion("", ""), {{{"t", "f", arguments}}, std::nullopt});
      ADD_FAILURE() << arguments;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 500);
      EXPECT_STREQ(e.what(), "the call of tool 'f' has arguments that are not a JSON object");
    }
  }
}

TEST(AnthropicResponse, IdsErrorsAndCounts) {
  const ResponseId id = new_message_id("m");
  EXPECT_EQ(id.id.rfind("msg_r1pi", 0), 0u) << id.id;
  EXPECT_NE(new_message_id("m").id, id.id);
  EXPECT_EQ(id.model, "m");
  EXPECT_EQ(json_text(count_tokens_json(42)), R"({"input_tokens":42})");
  const std::vector<std::pair<int, const char*>> types = {
      {400, "invalid_request_error"}, {401, "authentication_error"}, {404, "not_found_error"}, {413, "request_too_large"},
      {408, "invalid_request_error"}, {500, "api_error"},           {503, "overloaded_error"}};
  for (const auto& [status, type] : types)
    EXPECT_EQ(json_text(anthropic_error_body(ApiError(status, "why"))),
              std::string(R"({"type":"error","error":{"type":")") + type + R"(","message":"why"}})");
}

// ---- the stream ----

struct Event {
  std::string name;
  ordered_json data;
};

// "event: NAME\ndata: JSON\n\n" events, each checked to carry its name as its type.
std::vector<Event> events_of(const std::string& text) {
  std::vector<Event> events;
  size_t from = 0;
  while (from < text.size()) {
    const size_t end = text.find("\n\n", from);
    EXPECT_NE(end, std::string::npos) << text.substr(from);
    if (end == std::string::npos) break;
    const std::string one = text.substr(from, end - from);
    from = end + 2;
    const size_t line = one.find('\n');
    EXPECT_EQ(one.rfind("event: ", 0), 0u) << one;
    EXPECT_EQ(one.compare(line + 1, 6, "data: "), 0) << one;
    Event e{one.substr(7, line - 7), ordered_json::parse(one.substr(line + 7))};
    EXPECT_EQ(e.data["type"], e.name) << one;
    events.push_back(e);
  }
  return events;
}

std::vector<std::string> names(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.name);
  return out;
}

// The message as Anthropic's SDKs build it from the events, checking the order they rely on:
// message_start first, blocks opened at the next index, deltas of the block's own kind to the open
// block, a signature before a thinking block ends, message_delta then message_stop last.
ordered_json accumulate(const std::vector<Event>& events) {
  EXPECT_GE(events.size(), 4u);
  EXPECT_EQ(events.at(0).name, "message_start");
  EXPECT_EQ(events.at(1).name, "ping");
  EXPECT_EQ(events.back().name, "message_stop");
  ordered_json message = events[0].data["message"];
  EXPECT_EQ(message["content"], ordered_json::array());
  EXPECT_TRUE(message["stop_reason"].is_null());
  bool open = false;
  std::string partial_json;
  for (size_t i = 2; i + 1 < events.size(); ++i) {
    const Event& e = events[i];
    ordered_json& content = message["content"];
    if (e.name == "content_block_start") {
      EXPECT_FALSE(open);
      EXPECT_EQ(e.data["index"], content.size());
      content.push_back(e.data["content_block"]);
      open = true;
      partial_json.clear();
    } else if (e.name == "content_block_delta") {
      EXPECT_TRUE(open);
      EXPECT_EQ(e.data["index"], content.size() - 1);
      ordered_json& block = content.back();
      const ordered_json& delta = e.data["delta"];
      const std::string kind = delta["type"];
      if (kind == "text_delta" && block["type"] == "text") block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
      else if (kind == "thinking_delta" && block["type"] == "thinking" && !block.contains("signature"))
        block["thinking"] = block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      else if (kind == "signature_delta" && block["type"] == "thinking") block["signature"] = delta["signature"];
      else if (kind == "input_json_delta" && block["type"] == "tool_use") partial_json += delta["partial_json"].get<std::string>();
      else ADD_FAILURE() << kind << " to a " << block["type"] << " block";
    } else if (e.name == "content_block_stop") {
      EXPECT_TRUE(open);
      EXPECT_EQ(e.data["index"], content.size() - 1);
      ordered_json& block = content.back();
      if (block["type"] == "thinking") {
        EXPECT_TRUE(block.contains("signature")) << "a thinking block ended unsigned";
      }
      if (block["type"] == "tool_use") block["input"] = ordered_json::parse(partial_json);
      open = false;
    } else if (e.name == "message_delta") {
      EXPECT_FALSE(open);
      EXPECT_EQ(i + 2, events.size()) << "message_delta is the last event before message_stop";
      message["stop_reason"] = e.data["delta"]["stop_reason"];
      message["stop_sequence"] = e.data["delta"]["stop_sequence"];
      message["usage"].update(e.data["usage"]);
    } else {
      ADD_FAILURE() << "unexpected event " << e.name;
    }
  }
  return message;
}

struct Streamed {
  std::vector<Event> events;
  ordered_json whole;  // the answer not streamed
};

Streamed stream(const std::vector<TextParts>& pieces, const Completion& c, const AnthropicEnding& ending) {
  AnthropicStream s(kId, c.prompt_tokens);
  std::string text = s.start();
  for (const TextParts& piece : pieces) text += s.push(piece);
  text += s.finish(c, ending);
  return {events_of(text), anthropic_message_json(kId, c, ending)};
}

TEST(AnthropicStream, TextOnly) {
  const Streamed s = stream({{"", "Hel"}, {"", "lo."}}, completion("", "Hello."), {});
  EXPECT_EQ(names(s.events), (std::vector<std::string>{"message_start", "ping", "content_block_start",
                                                       "content_block_delta", "content_block_delta",
                                                       "content_block_stop", "message_delta", "message_stop"}));
  // message_start: the message without content, the prompt's tokens before the cache is known.
  EXPECT_EQ(s.events[0].data, ordered_json::parse(R"({"type": "message_start", "message": {
      "id": "msg_r1pi1-7", "type": "message", "role": "assistant", "model": "r1pi-model", "content": [],
      "stop_reason": null, "stop_sequence": null,
      "usage": {"input_tokens": 12, "output_tokens": 0, "cache_read_input_tokens": 0}}})"));
  EXPECT_EQ(s.events[2].data, ordered_json::parse(
      R"({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})"));
  EXPECT_EQ(s.events[3].data, ordered_json::parse(
      R"({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}})"));
  EXPECT_EQ(s.events[5].data, ordered_json::parse(R"({"type": "content_block_stop", "index": 0})"));
  EXPECT_EQ(s.events[6].data, ordered_json::parse(R"({"type": "message_delta",
      "delta": {"stop_reason": "end_turn", "stop_sequence": null},
      "usage": {"input_tokens": 8, "output_tokens": 3, "cache_read_input_tokens": 4}})"));
  EXPECT_EQ(s.events[7].data, ordered_json::parse(R"({"type": "message_stop"})"));
  EXPECT_EQ(accumulate(s.events), s.whole);
}

TEST(AnthropicStream, ThinkingThenText) {
  // As the reasoning split hands them over: the piece that crosses "</think>" carries both parts.
  const Streamed s = stream({{"Hmm", ""}, {", 2+2.", "It"}, {"", " is 4."}}, completion("Hmm, 2+2.", "It is 4."), {});
  EXPECT_EQ(names(s.events),
            (std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_delta", "content_block_stop",
                                      "content_block_start", "content_block_delta", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(s.events[2].data["content_block"], ordered_json::parse(R"({"type": "thinking", "thinking": ""})"));
  EXPECT_EQ(s.events[3].data["delta"], ordered_json::parse(R"({"type": "thinking_delta", "thinking": "Hmm"})"));
  EXPECT_EQ(s.events[5].data, ordered_json::parse(
      R"({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": ""}})"));
  EXPECT_EQ(s.events[7].data["index"], 1);
  EXPECT_EQ(s.events[7].data["content_block"]["type"], "text");
  EXPECT_EQ(accumulate(s.events), s.whole);
}

TEST(AnthropicStream, TextThenToolUse) {
  const AnthropicEnding ending{{{"toolu_w", "weather", R"({"city":"Oslo"})"}, {"toolu_t", "time", "{}"}}, std::nullopt};
  const Streamed s = stream({{"", "Checking."}}, completion("", "Checking."), ending);
  EXPECT_EQ(names(s.events),
            (std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                      "content_block_stop", "content_block_start", "content_block_delta",
                                      "content_block_stop", "content_block_start", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(s.events[5].data, ordered_json::parse(R"({"type": "content_block_start", "index": 1,
      "content_block": {"type": "tool_use", "id": "toolu_w", "name": "weather", "input": {}}})"));
  EXPECT_EQ(s.events[6].data, ordered_json::parse(R"({"type": "content_block_delta", "index": 1,
      "delta": {"type": "input_json_delta", "partial_json": "{\"city\":\"Oslo\"}"}})"));
  EXPECT_EQ(s.events[11].data["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(accumulate(s.events), s.whole);
}

// A call streamed as soon as the parser completes it; finish sends only the calls after it.
TEST(AnthropicStream, CallsAsTheyComplete) {
  const AnthropicEnding ending{{{"toolu_w", "weather", R"({"city":"Oslo"})"}, {"", "time", "{}"}}, std::nullopt};
  AnthropicStream s(kId, 12);
  std::string text = s.start();
  text += s.push({"", "Checking."});
  text += s.push_call(ending.tool_calls[0]);
  const std::string before_finish = text;
  text += s.finish(completion("", "Checking."), ending);
  const std::vector<Event> events = events_of(text);
  EXPECT_EQ(events_of(before_finish).size(), 8u);  // the text block closed, the first call's block whole
  EXPECT_EQ(accumulate(events), anthropic_message_json(kId, completion("", "Checking."), ending));
  EXPECT_EQ(events[8].data["content_block"]["id"], "toolu_r1pi1-7_1");  // the second call's, once
}

TEST(AnthropicStream, EmptyAnswerAndStopSequence) {
  const Streamed s = stream({}, completion("", ""), {{}, "END"});
  EXPECT_EQ(names(s.events), (std::vector<std::string>{"message_start", "ping", "message_delta", "message_stop"}));
  EXPECT_EQ(s.events[2].data["delta"], ordered_json::parse(R"({"stop_reason": "stop_sequence", "stop_sequence": "END"})"));
  EXPECT_EQ(accumulate(s.events), s.whole);
}

TEST(AnthropicStream, ErrorsMidStream) {
  AnthropicStream s(kId, 3);
  s.start();
  s.push({"", "partial"});
  // Bad arguments throw before a single event of the ending is made: the caller sends error().
  EXPECT_THROW(s.finish(completion("", "partial"), {{{"t", "f", "not json"}}, std::nullopt}), ApiError);
  EXPECT_EQ(AnthropicStream::error(ApiError(500, "the model failed", "server_error")),
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"the model failed\"}}\n\n");
}

TEST(ApiKey, TakesAuthorizationOrXApiKey) {
  EXPECT_TRUE(api_key_accepted("Bearer k3y", "", "k3y"));
  EXPECT_TRUE(api_key_accepted("", "k3y", "k3y"));
  EXPECT_TRUE(api_key_accepted("Bearer wrong", "k3y", "k3y"));
  EXPECT_FALSE(api_key_accepted("", "", "k3y"));
  EXPECT_FALSE(api_key_accepted("Bearer k3", "k3", "k3y"));
  EXPECT_FALSE(api_key_accepted("k3y", "Bearer k3y", "k3y"));  // each header in its own form
}

}  // namespace
}  // namespace r1pi
