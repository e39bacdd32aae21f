// The server's routes in-process, over real HTTP (cpp-httplib's client), with a scripted token
// source in place of a model: it "generates" a fixed DeepSeek-R1 answer, so that the reasoning
// split is seen end to end, streamed and not, with "</think>" as R1's single token and spelled in
// pieces over several tokens (a random-weight model never writes it). The queue, the API key and
// the error shapes are checked on the same server.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>

#include "server/client_connection.h"
#include "server/http_server.h"
#include "server/server.h"
#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"

namespace r1pi {
namespace {

using nlohmann::json;

const Tokenizer& deepseek() {
  static const Tokenizer t(
      load_hf_tokenizer_json(test::shared_data("llama3-tokenizer.json"), SpecialTokenNames::DeepSeekR1));
  return t;
}

// Answers every forward that asks for a token with the next one of its script, then `after`
// (EOS unless told: an endless script fills the context). It counts those forwards, and can hold
// one (hold_from): a client can then act while the engine is inside a token's forward.
class ScriptedSource final : public test::FakeTokenSource {
 public:
  explicit ScriptedSource(std::vector<int32_t> script, int32_t after = deepseek().eos_id())
      : FakeTokenSource(512), script_(std::move(script)), after_(after) {}
  int32_t pick(const Batch& batch, int, const Sampler&) override {
    const int pos = batch.positions[0];
    {
      std::unique_lock lock(mutex_);
      ++forwards_;
      if (forwards_ >= hold_from_) {
        held_ = true;
        changed_.notify_all();
        changed_.wait(lock, [&] { return forwards_ < hold_from_; });
        held_ = false;
      }
    }
    if (pos == 0 || pos < last_pos_) next_ = 0;  // a new prompt: the script starts over
    last_pos_ = pos;
    return next_ < script_.size() ? script_[next_++] : after_;
  }
  // Forwards from the n-th token's on (counted over all requests) wait until release().
  void hold_from(int n) {
    std::lock_guard lock(mutex_);
    hold_from_ = n;
  }
  // Waits until a forward is held (false after 30 s).
  bool wait_held() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return held_; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    hold_from_ = INT_MAX;
    changed_.notify_all();
  }
  int forwards() {
    std::lock_guard lock(mutex_);
    return forwards_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int forwards_ = 0, hold_from_ = INT_MAX;
  bool held_ = false;
  std::vector<int32_t> script_;
  int32_t after_;
  size_t next_ = 0;
  int last_pos_ = 0;
};

// A server on a free port for the life of the test, serving on a thread of its own.
class ScriptedServer {
 public:
  ScriptedServer(std::vector<int32_t> script, ServeOptions options, int32_t after = deepseek().eos_id())
      : source_(std::move(script), after) {
    options.port = 0;
    options.model_name = "scripted";
    std::atomic<int> port{0};
    thread_ = std::thread([this, options, &port] {
      serve_until(source_, deepseek(), options, [this] { return stop_.load(); }, [&](int p) { port = p; });
    });
    while (port == 0) std::this_thread::yield();
    port_ = port;
  }
  ~ScriptedServer() {
    stop_ = true;
    thread_.join();
  }
  // As SIGTERM: the server stops (the answer in hand ends at its next token); the destructor waits.
  void stop() { stop_ = true; }
  // cpp-httplib's client gives up reading after 5 s: under TSan on a machine with 15 runnable
  // processes per 2 cores, answers took longer (a 401 too, no engine involved). 120 s: a stuck
  // server still fails the test, a slow machine does not.
  httplib::Client client() const {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_read_timeout(120, 0);
    cli.set_write_timeout(120, 0);
    cli.set_connection_timeout(120, 0);
    return cli;
  }
  int port() const { return port_; }
  ScriptedSource& source() { return source_; }

 private:
  ScriptedSource source_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int port_ = 0;
};

const std::string kAnswer = "Two and two.</think>\n\nIt is 4.";

std::vector<int32_t> script(bool think_end_in_pieces) {
  return deepseek().encode(kAnswer, false, !think_end_in_pieces);
}

const std::string kChat = R"({"messages": [{"role": "user", "content": "2+2?"}], "temperature": 0)";

// The reasoning and content of a streamed chat answer, and the events' shapes checked on the way.
std::pair<std::string, std::string> streamed(httplib::Client& cli, const std::string& body) {
  auto res = cli.Post("/v1/chat/completions", body, "application/json");
  EXPECT_TRUE(res);
  if (!res) return {};
  EXPECT_EQ(res->status, 200);
  std::string reasoning, content, finish;
  bool role_first = false, done = false;
  size_t from = 0, events = 0;
  for (size_t end; (end = res->body.find("\n\n", from)) != std::string::npos; from = end + 2) {
    const std::string event = res->body.substr(from, end - from);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    if (event == "data: [DONE]") {
      done = true;
      continue;
    }
    const json j = json::parse(event.substr(6));
    EXPECT_EQ(j["object"], "chat.completion.chunk");
    if (j["choices"].empty()) continue;  // the usage event
    const json& delta = j["choices"][0]["delta"];
    if (events++ == 0) role_first = delta.value("role", "") == "assistant";
    reasoning += delta.value("reasoning_content", "");
    content += delta.value("content", "");
    if (!j["choices"][0]["finish_reason"].is_null()) finish = j["choices"][0]["finish_reason"];
  }
  EXPECT_TRUE(role_first);
  EXPECT_TRUE(done);
  EXPECT_EQ(finish, "stop");
  return {reasoning, content};
}

// A server that "generates" answer (its marker tokens whole, then spelled in pieces) splits it
// into these parts, streamed and whole.
void expect_served_split(const std::string& answer, const ServeOptions& options, const std::string& want_reasoning,
                         const std::string& want_content) {
  ASSERT_NE(deepseek().encode(answer, false, true), deepseek().encode(answer, false, false));  // two ways to spell it
  for (bool pieces : {false, true}) {
    const std::vector<int32_t> tokens = deepseek().encode(answer, false, !pieces);
    ScriptedServer server(tokens, options);
    httplib::Client cli = server.client();
    const auto [reasoning, content] = streamed(cli, kChat + R"(, "stream": true})");
    EXPECT_EQ(reasoning, want_reasoning) << pieces;
    EXPECT_EQ(content, want_content) << pieces;
    auto whole = cli.Post("/v1/chat/completions", kChat + "}", "application/json");
    ASSERT_TRUE(whole);
    const json j = json::parse(whole->body);
    EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], want_reasoning);
    EXPECT_EQ(j["choices"][0]["message"]["content"], want_content);
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(j["usage"]["completion_tokens"], int(tokens.size()) + 1);  // and EOS
  }
}

TEST(ServerHttp, ReasoningSplitStreamedAndWholeWithThinkEndAsOneTokenOrInPieces) {
  expect_served_split(kAnswer, ServeOptions{}, "Two and two.", "\n\nIt is 4.");
}

ServeOptions qwen3(bool reasoning) {
  ServeOptions o;
  o.chat.template_name = "qwen3";
  o.chat.reasoning = reasoning;
  return o;
}

// Qwen3's template on the same server (the split does not depend on the vocabulary): the answer
// opens its think block itself, "<think>" as one token (an ordinary one in Qwen3's vocabulary) or
// spelled in pieces.
TEST(ServerHttp, Qwen3ReasoningSplitWhenTheAnswerOpensItsThinkBlock) {
  expect_served_split("<think>\nTwo and two.\n</think>\n\nIt is 4.", qwen3(true), "\nTwo and two.\n",
                      "\n\nIt is 4.");
}

int prompt_tokens(httplib::Client& cli, const std::string& body) {
  auto res = cli.Post("/v1/chat/completions", body, "application/json");
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
  return res && res->status == 200 ? json::parse(res->body)["usage"]["prompt_tokens"].get<int>() : -1;
}

// chat_template_kwargs.enable_thinking=false, --reasoning off and Qwen3's "/no_think" all end the
// prompt with the empty think block (its four tokens here); a request's kwargs override --reasoning.
TEST(ServerHttp, Qwen3ThinkingOffByChatTemplateKwargsReasoningOffOrNoThink) {
  const int block = int(deepseek().encode("<think>\n\n</think>\n\n", false, true).size());
  ASSERT_EQ(block, 4);
  const std::string on = R"(, "chat_template_kwargs": {"enable_thinking": true}})";
  const std::string off = R"(, "chat_template_kwargs": {"enable_thinking": false}})";
  for (bool reasoning : {true, false}) {
    ScriptedServer server(deepseek().encode("Four.", false, true), qwen3(reasoning));
    httplib::Client cli = server.client();
    const int thinking = prompt_tokens(cli, kChat + on);
    EXPECT_EQ(prompt_tokens(cli, kChat + off), thinking + block);
    EXPECT_EQ(prompt_tokens(cli, kChat + "}"), reasoning ? thinking : thinking + block);
    const std::string no_think = R"({"messages": [{"role": "user", "content": "2+2? /no_think"}])";
    EXPECT_EQ(prompt_tokens(cli, no_think + on), prompt_tokens(cli, no_think + off));
  }
  ScriptedServer server({}, qwen3(true));
  httplib::Client cli = server.client();
  auto bad = cli.Post("/v1/chat/completions", kChat + R"(, "chat_template_kwargs": {"enable_thinking": "no"}})",
                      "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["message"], "'chat_template_kwargs.enable_thinking' must be true or false");
}

// gpt-oss's harmony through the whole server, whole and streamed: the analysis is the reasoning,
// the preamble content, the message to a function a tool call (the markers are spelled in text
// here: the scripted vocabulary has no harmony tokens, and the split reads text).
TEST(ServerHttp, HarmonyCallBecomesToolCalls) {
  ServeOptions options;
  options.chat.template_name = "harmony";
  const std::string answer =
      "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary<|message|>"
      "Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"city\": \"Oslo\"}";
  ScriptedServer server(deepseek().encode(answer, false, false), options);
  httplib::Client cli = server.client();
  const std::string request =
      R"({"messages": [{"role": "user", "content": "Weather in Oslo?"}], "temperature": 0, "tools": [{"type": )"
      R"("function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": )"
      R"({"type": "string"}}}}}])";
  auto whole = cli.Post("/v1/chat/completions", request + "}", "application/json");
  ASSERT_TRUE(whole);
  const json message = json::parse(whole->body)["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "Need the weather.");
  EXPECT_EQ(message["content"], "Checking.");
  ASSERT_EQ(message["tool_calls"].size(), 1u) << whole->body;
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], R"({"city":"Oslo"})");
  EXPECT_EQ(json::parse(whole->body)["choices"][0]["finish_reason"], "tool_calls");
  auto streamed_answer = cli.Post("/v1/chat/completions", request + R"(, "stream": true})", "application/json");
  ASSERT_TRUE(streamed_answer);
  std::string name, arguments;
  for (size_t from = 0, end; (end = streamed_answer->body.find("\n\n", from)) != std::string::npos; from = end + 2) {
    const std::string event = streamed_answer->body.substr(from, end - from);
    if (event == "data: [DONE]" || event.rfind("data: ", 0) != 0) continue;
    const json j = json::parse(event.substr(6));
    if (j["choices"].empty() || !j["choices"][0]["delta"].contains("tool_calls")) continue;
    const json& f = j["choices"][0]["delta"]["tool_calls"][0]["function"];
    name += f.value("name", "");
    arguments += f.value("arguments", "");
  }
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(arguments, R"({"city":"Oslo"})");
  // Under a forced call the preamble is refused (the answer is the call): a 500 naming where.
  auto forced = cli.Post("/v1/chat/completions", request + R"(, "tool_choice": "required"})", "application/json");
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->status, 500);
  EXPECT_NE(forced->body.find("the grammar allows no token after"), std::string::npos) << forced->body;
}

// A forced call the model writes as harmony's constraint wants it: after its analysis, a message
// to the function with gpt-oss's usual content type.
TEST(ServerHttp, HarmonyForcedCallFollowsTheConstraint) {
  ServeOptions options;
  options.chat.template_name = "harmony";
  const std::string answer =
      "<|channel|>analysis<|message|>Call it.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
      "<|constrain|>json<|message|>{\"city\": \"Oslo\"}";
  ScriptedServer server(deepseek().encode(answer, false, false), options);
  httplib::Client cli = server.client();
  auto forced = cli.Post("/v1/chat/completions",
                         R"({"messages": [{"role": "user", "content": "Weather?"}], "temperature": 0, "tool_choice": )"
                         R"("required", "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": )"
                         R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})",
                         "application/json");
  ASSERT_TRUE(forced);
  ASSERT_EQ(forced->status, 200) << forced->body;
  const json message = json::parse(forced->body)["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "Call it.");
  ASSERT_EQ(message["tool_calls"].size(), 1u) << forced->body;
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], R"({"city":"Oslo"})");
}

TEST(ServerHttp, ReasoningFormatNoneAndCompletionsKeepTheWholeText) {
  ServeOptions none;
  none.split_reasoning = false;
  ScriptedServer server(script(true), none);
  httplib::Client cli = server.client();
  const auto [reasoning, content] = streamed(cli, kChat + R"(, "stream": true})");
  EXPECT_EQ(reasoning, "");
  EXPECT_EQ(content, kAnswer);
  auto text = cli.Post("/v1/completions", R"({"prompt": "x", "temperature": 0})", "application/json");
  ASSERT_TRUE(text);
  EXPECT_EQ(json::parse(text->body)["choices"][0]["text"], kAnswer);
}

TEST(ServerHttp, StopStringCutsTheAnswer) {
  ScriptedServer server(script(true), ServeOptions{});
  httplib::Client cli = server.client();
  auto res = cli.Post("/v1/chat/completions", kChat + R"(, "stop": ["is 4"]})", "application/json");
  ASSERT_TRUE(res);
  const json j = json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "\n\nIt ");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST(ServerHttp, ApiKeyErrorsAndRoutes) {
  ServeOptions keyed;
  keyed.api_key = "sesame";
  ScriptedServer server(script(false), keyed);
  httplib::Client cli = server.client();
  auto refused = cli.Post("/v1/chat/completions", kChat + "}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(json::parse(refused->body)["error"]["code"], "invalid_api_key");
  cli.set_bearer_token_auth("sesame-not");
  EXPECT_EQ(cli.Get("/v1/models")->status, 401);
  EXPECT_EQ(cli.Get("/health")->status, 200);  // health and the page need no key
  EXPECT_EQ(cli.Get("/")->status, 200);
  cli.set_bearer_token_auth("sesame");
  EXPECT_EQ(json::parse(cli.Get("/v1/models")->body)["data"][0]["id"], "scripted");
  auto bad = cli.Post("/v1/chat/completions", "{\"messages\": 3}", "application/json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(cli.Get("/nowhere")->status, 404);
  auto tokens = cli.Post("/tokenize", R"({"content": "Hi</think>"})", "application/json");
  const json ids = json::parse(tokens->body)["tokens"];
  EXPECT_EQ(ids.back(), 128014);  // "</think>" is one special token
  auto text = cli.Post("/detokenize", json{{"tokens", ids}}.dump(), "application/json");
  EXPECT_EQ(json::parse(text->body)["content"], "Hi</think>");
  EXPECT_EQ(cli.Post("/detokenize", R"({"tokens": [-1]})", "application/json")->status, 400);
  auto metrics = cli.Get("/metrics");
  EXPECT_NE(metrics->body.find("r1pi_requests_total{status=\"4xx\"}"), std::string::npos);
}

TEST(ServerHttp, OversizeBody) {
  ServeOptions small;
  small.max_body_bytes = 1000;
  ScriptedServer server(script(false), small);
  httplib::Client cli = server.client();
  auto big = cli.Post("/v1/completions", "{\"prompt\": \"" + std::string(2000, 'a') + "\"}", "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(cli.Get("/health")->status, 200);  // and it goes on serving
}

TEST(ServerHttp, PromptOverTheContext) {
  ScriptedServer server(script(false), ServeOptions{});
  httplib::Client cli = server.client();
  std::string words = "a";
  for (int i = 0; i < 600; ++i) words += " a";  // " a" is one token: 601 tokens and BOS
  const size_t n = deepseek().encode(words, true, true).size();
  ASSERT_GT(n, 512u);
  auto over = cli.Post("/v1/completions", json{{"prompt", words}}.dump(), "application/json");
  EXPECT_EQ(over->status, 400);
  EXPECT_EQ(json::parse(over->body)["error"]["code"], "context_length_exceeded");
  EXPECT_NE(json::parse(over->body)["error"]["message"].get<std::string>().find(std::to_string(n) + " tokens"),
            std::string::npos);
  auto fits = cli.Post("/v1/completions", json{{"prompt", words.substr(0, 400)}, {"max_tokens", 1000}}.dump(),
                       "application/json");
  EXPECT_EQ(fits->status, 200);
}

TEST(ServerHttp, FillingTheContextEndsWithLength) {
  ScriptedServer server({}, ServeOptions{}, deepseek().encode("a", false, false)[0]);
  httplib::Client cli = server.client();
  auto res = cli.Post("/v1/completions", R"({"prompt": "x"})", "application/json");
  ASSERT_TRUE(res);
  const json j = json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  // Every position fed, and the token chosen from the last one's logits.
  EXPECT_EQ(j["usage"]["prompt_tokens"].get<int>() + j["usage"]["completion_tokens"].get<int>(), 512 + 1);
}

// GET /props: llama-server's fields, with the values this server was started with; behind the key.
TEST(ServerHttp, PropsShowTheServersDefaults) {
  ServeOptions o;
  o.api_key = "sesame";
  o.model_path = "/models/scripted.gguf";
  o.build_info = "r1pi test";
  o.chat.generation.sampler.temperature = 0.3f;  // --temp 0.3 (R1's template would make it 0.6 unsaid)
  o.chat.temperature_given = true;
  o.chat.generation.sampler.top_k = 7;
  o.chat.generation.sampler.penalties = {1.25f, 32, 0.5f, 0.0f};
  o.chat.generation.n_predict = 64;
  ScriptedServer server(script(false), o);
  httplib::Client cli = server.client();
  EXPECT_EQ(cli.Get("/props")->status, 401);
  cli.set_bearer_token_auth("sesame");
  auto res = cli.Get("/props");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json p = json::parse(res->body);
  const json& settings = p["default_generation_settings"];
  EXPECT_EQ(settings["n_ctx"], 512);
  EXPECT_EQ(settings["params"]["temperature"], 0.3);
  EXPECT_EQ(settings["params"]["top_p"], 0.95);  // R1's recommendation, not given
  EXPECT_EQ(settings["params"]["top_k"], 7);
  EXPECT_EQ(settings["params"]["repeat_penalty"], 1.25);
  EXPECT_EQ(settings["params"]["repeat_last_n"], 32);
  EXPECT_EQ(settings["params"]["frequency_penalty"], 0.5);
  EXPECT_EQ(settings["params"]["presence_penalty"], 0.0);
  EXPECT_EQ(settings["params"]["n_predict"], 64);
  EXPECT_EQ(settings["params"]["max_tokens"], 64);
  EXPECT_EQ(settings["params"]["seed"], -1);
  EXPECT_EQ(settings["params"]["reasoning_format"], "deepseek");
  EXPECT_EQ(settings["speculative"], false);
  EXPECT_EQ(p["total_slots"], 1);
  EXPECT_EQ(p["model_path"], "/models/scripted.gguf");
  EXPECT_EQ(p["model_alias"], "scripted");
  EXPECT_EQ(p["chat_template"], "deepseek-r1");
  EXPECT_EQ(p["build_info"], "r1pi test");
  EXPECT_EQ(p["eos_token"], "<｜end▁of▁sentence｜>");
  EXPECT_EQ(p["modalities"], json({{"vision", false}, {"audio", false}}));
}

// The tab icon: an SVG at /favicon.svg (the page links it) and /favicon.ico, with no key needed
// (a browser asks without one).
TEST(ServerHttp, FaviconIsServedWithoutTheKey) {
  ServeOptions keyed;
  keyed.api_key = "sesame";
  ScriptedServer server(script(false), keyed);
  httplib::Client cli = server.client();
  for (const char* path : {"/favicon.ico", "/favicon.svg"}) {
    auto res = cli.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), "image/svg+xml") << path;
    EXPECT_EQ(res->body.rfind("<svg ", 0), 0u) << path;
    EXPECT_LT(res->body.size(), 1024u) << path;
  }
  EXPECT_NE(cli.Get("/")->body.find("<link rel=\"icon\" href=\"/favicon.svg\""), std::string::npos);
}

// The lines a server logs (ServeOptions::log), kept for the test.
class LogLines {
 public:
  std::function<void(const std::string&)> sink() const {
    return [state = state_](const std::string& line) {
      std::lock_guard lock(state->mutex);
      state->lines.push_back(line);
      state->changed.notify_all();
    };
  }
  // The lines once there are n (fewer after 30 s: the test fails on what is missing).
  std::vector<std::string> wait_for(size_t n) const {
    std::unique_lock lock(state_->mutex);
    state_->changed.wait_for(lock, std::chrono::seconds(30), [&] { return state_->lines.size() >= n; });
    return state_->lines;
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::string> lines;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// The line of the matching request (the layer logs after the answer's last byte, so the lines of
// requests on different connections may come in any order).
std::smatch logged(const std::vector<std::string>& lines, const std::regex& pattern) {
  std::smatch m;
  for (const std::string& line : lines)
    if (std::regex_match(line, m, pattern)) return m;
  ADD_FAILURE() << "no line matches; the lines:\n" << ::testing::PrintToString(lines);
  return m;
}

// One line per request, when its answer is complete: tokens and ids for completions (whole and
// streamed), "-" for the rest, errors too.
TEST(ServerHttp, OneLogLinePerRequest) {
  LogLines log;
  ServeOptions o;
  o.log = log.sink();
  ScriptedServer server(script(false), o);
  httplib::Client cli = server.client();
  auto whole = cli.Post("/v1/chat/completions", kChat + "}", "application/json");
  ASSERT_TRUE(whole);
  const json usage = json::parse(whole->body)["usage"];
  streamed(cli, kChat + R"(, "stream": true})");
  EXPECT_EQ(cli.Get("/nowhere")->status, 404);
  EXPECT_EQ(cli.Get("/health")->status, 200);
  const std::vector<std::string> lines = log.wait_for(4);
  EXPECT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
  const std::string gen = std::to_string(usage["completion_tokens"].get<int>());
  const std::string prompt = std::to_string(usage["prompt_tokens"].get<int>());
  const std::string id = json::parse(whole->body)["id"];
  logged(lines, std::regex("serve: POST /v1/chat/completions 200 prompt " + prompt + " gen " + gen +
                           " [0-9]+ ms id " + id + " ticket 1"));
  logged(lines, std::regex("serve: POST /v1/chat/completions 200 prompt " + prompt + " gen " + gen +
                           " [0-9]+ ms id chatcmpl-[^ ]+ ticket 2"));
  logged(lines, std::regex("serve: GET /nowhere 404 - [0-9]+ ms"));
  logged(lines, std::regex("serve: GET /health 200 - [0-9]+ ms"));
}

// What the server sends until it closes the connection (at most 10 s).
std::string read_until_closed(int fd) {
  std::string got;
  char buffer[4096];
  for (int waits = 0; waits < 100; ++waits) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got.append(buffer, size_t(n));
  }
  return got;
}

// A request sent on a socket of its own, which the test closes when it likes.
class RawClient {
 public:
  RawClient(int port, const std::string& path, const std::string& body)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)), server_port_(port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    const std::string request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                                "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    EXPECT_EQ(send(fd_, request.data(), request.size(), 0), ssize_t(request.size()));
  }
  ~RawClient() {
    if (fd_ >= 0) close(fd_);
  }
  // Resets the connection (a client that left: a closed socket answers the server's next write
  // with a reset, so a close that only says "nothing more to send" counts once a write fails),
  // and waits until the server's end of it (a socket of this process, once the server has
  // accepted it) has seen that; false when it did not within 30 s.
  bool close_now() {
    ClientConnection server_side;
    for (int i = 0; i < 3000 && !server_side.known(); ++i) {
      server_side = connection_between("127.0.0.1", server_port_, "127.0.0.1", port_);
      if (!server_side.known()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const linger reset{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(fd_);
    fd_ = -1;
    for (int i = 0; i < 3000 && !server_side.closed(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return server_side.closed();
  }
  // Says it sends nothing more (shutdown(SHUT_WR), nc -N), then reads the answer to its end.
  std::string half_close_and_read() {
    shutdown(fd_, SHUT_WR);
    return read_until_closed(fd_);
  }
  std::string read_all() { return read_until_closed(fd_); }

 private:
  int fd_;
  int server_port_, port_ = 0;
};

// A counter of /metrics (-1 when it is not there).
long metric(httplib::Client& cli, const std::string& name) {
  auto res = cli.Get("/metrics");
  if (!res) return -1;
  const size_t at = res->body.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stol(res->body.substr(at + name.size() + 2));
}

// Waits until the metric reaches want (false after 30 s).
bool metric_reaches(httplib::Client& cli, const std::string& name, long want) {
  for (int i = 0; i < 3000; ++i) {
    if (metric(cli, name) >= want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

const int32_t kEndless = deepseek().encode("a", false, false)[0];  // never ends a turn

// The client closes its connection while the engine computes its 4th token (that forward is held
// until the server's end has seen the close): no forward follows, and the next request is served.
// (Before the engine watched the connection, a request that did not stream ran to its max_tokens,
// and a streamed one went on until a write failed: the first write after the close succeeds.)
void closes_while_a_token_is_computed(bool stream) {
  ScriptedServer server({}, ServeOptions{}, kEndless);
  httplib::Client cli = server.client();
  server.source().hold_from(4);
  RawClient leaving(server.port(), "/v1/completions",
                    json{{"prompt", "x"}, {"max_tokens", 200}, {"stream", stream}}.dump());
  ASSERT_TRUE(server.source().wait_held());
  ASSERT_TRUE(leaving.close_now()) << "the server's end never saw the close";
  server.source().release();
  ASSERT_TRUE(metric_reaches(cli, "r1pi_generations_cancelled_total", 1)) << "the generation was not cancelled";
  EXPECT_EQ(server.source().forwards(), 4);
  auto next = cli.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 3})", "application/json");
  ASSERT_TRUE(next);
  EXPECT_EQ(json::parse(next->body)["usage"]["completion_tokens"], 3);
  EXPECT_EQ(metric(cli, "r1pi_generations_cancelled_total"), 1);
}

TEST(ServerHttp, ClientThatClosesEndsItsGenerationWithinOneToken) { closes_while_a_token_is_computed(false); }

TEST(ServerHttp, ClientThatClosesEndsItsStreamWithinOneToken) { closes_while_a_token_is_computed(true); }

// A request whose client leaves while it waits in the queue is never generated.
TEST(ServerHttp, ClientThatClosesWhileQueuedIsNotGenerated) {
  ScriptedServer server({}, ServeOptions{}, kEndless);
  httplib::Client cli = server.client();
  server.source().hold_from(2);
  std::thread first([&] {
    httplib::Client own = server.client();
    auto res = own.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 5})", "application/json");
    EXPECT_TRUE(res && res->status == 200);
  });
  ASSERT_TRUE(server.source().wait_held());
  {
    RawClient leaving(server.port(), "/v1/completions", R"({"prompt": "y", "max_tokens": 5})");
    ASSERT_TRUE(metric_reaches(cli, "r1pi_queue_length", 2));
    ASSERT_TRUE(leaving.close_now());
  }
  server.source().release();
  first.join();
  // The engine takes the second job only after the first: wait until it has been taken.
  for (int i = 0; i < 3000 && metric(cli, "r1pi_queue_length") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(metric(cli, "r1pi_queue_length"), 0);
  EXPECT_EQ(metric(cli, "r1pi_generations_total"), 1);
  EXPECT_EQ(server.source().forwards(), 5);
}

// The body of an answer read whole off the wire (after the head; chunked framing left in).
std::string after_head(const std::string& answer) {
  const size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : answer.substr(at + 4);
}

// A client that half-closes after its request (shutdown(SHUT_WR), `nc -N`, some proxies) still
// wants the answer: it is generated whole, streamed or not. (The engine used to take the end of
// its input for a client that left: 499, or a stream cut without a finish.)
TEST(ServerHttp, HalfClosedClientGetsItsWholeAnswer) {
  ScriptedServer server({}, ServeOptions{}, kEndless);
  httplib::Client cli = server.client();
  RawClient whole(server.port(), "/v1/completions", R"({"prompt": "x", "max_tokens": 3})");
  const std::string answer = whole.half_close_and_read();
  ASSERT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
  EXPECT_EQ(json::parse(after_head(answer))["usage"]["completion_tokens"], 3);
  RawClient streamed(server.port(), "/v1/completions", R"({"prompt": "x", "max_tokens": 3, "stream": true})");
  const std::string events = streamed.half_close_and_read();
  EXPECT_EQ(events.rfind("HTTP/1.1 200 ", 0), 0u) << events;
  EXPECT_NE(events.find(R"("finish_reason":"length")"), std::string::npos) << events;
  EXPECT_NE(events.find("data: [DONE]"), std::string::npos) << events;
  EXPECT_EQ(metric(cli, "r1pi_generations_cancelled_total"), 0);
}

// SIGTERM while an answer is generated: it ends at its next token with an error, streamed (an
// error event, never finish_reason "stop") or whole (500), so that the client knows it is cut.
void stopped_while_a_token_is_computed(bool stream) {
  ScriptedServer server({}, ServeOptions{}, kEndless);
  server.source().hold_from(4);
  RawClient client(server.port(), "/v1/completions",
                   json{{"prompt", "x"}, {"max_tokens", 200}, {"stream", stream}}.dump());
  ASSERT_TRUE(server.source().wait_held());
  server.stop();
  server.source().release();
  const std::string answer = client.read_all();
  EXPECT_NE(answer.find("the server is shutting down"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("finish_reason\":\"stop"), std::string::npos) << answer;
  if (stream) {
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
    EXPECT_NE(answer.find(R"(data: {"error":)"), std::string::npos) << answer;
  } else {
    EXPECT_EQ(answer.rfind("HTTP/1.1 500 ", 0), 0u) << answer;
  }
}

TEST(ServerHttp, StopMidStreamEndsWithAnErrorEvent) { stopped_while_a_token_is_computed(true); }

TEST(ServerHttp, StopMidAnswerIs500) { stopped_while_a_token_is_computed(false); }

// ---- the HTTP layer (http_server.h) alone, with tight limits

// The layer with two routes (GET /health, POST /size: the body's size) on a free port, serving on
// a thread of its own.
class LayerServer {
 public:
  explicit LayerServer(HttpLimits limits) : http_(limits) {
    http_.get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    http_.post("/size", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    http_.set_error_body([](httplib::Response& res, const std::string& m) { res.set_content(m, "text/plain"); });
    port_ = http_.bind("127.0.0.1", 0);
    EXPECT_GT(port_, 0);
    thread_ = std::thread([this] { http_.run(); });
  }
  ~LayerServer() {
    http_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  HttpServer http_;
  std::thread thread_;
  int port_ = 0;
};

int connected(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// A connection over the cap from one address is answered 503 with Retry-After and closed; the
// connections held go on being served, and a place that frees up is taken again.
TEST(ServerHttp, ConnectionOverTheCapPerAddressGets503) {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.max_connections_per_address = 3;
  LayerServer server(limits);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(connected(server.port()));
  const int over = connected(server.port());
  const std::string refused = read_until_closed(over);
  close(over);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503 ", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos) << refused;
  EXPECT_NE(refused.find("too many connections from this address"), std::string::npos) << refused;
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(send(held[0], health.data(), health.size(), 0), ssize_t(health.size()));
  EXPECT_EQ(read_until_closed(held[0]).rfind("HTTP/1.1 200 ", 0), 0u);
  for (int fd : held) close(fd);
  // The closes reach the event thread soon: a new connection is served again.
  std::string answer;
  for (int i = 0; i < 100 && answer.rfind("HTTP/1.1 200 ", 0) != 0; ++i) {
    const int fd = connected(server.port());
    send(fd, health.data(), health.size(), MSG_NOSIGNAL);
    answer = read_until_closed(fd);
    close(fd);
  }
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer;
}

// A connection that sends nothing is closed after the keep-alive time; one whose request does not
// arrive within the read timeout gets 408.
TEST(ServerHttp, IdleConnectionClosesAndASlowRequestGets408) {
  HttpLimits limits;
  limits.keep_alive_seconds = 1;
  limits.read_timeout_seconds = 1;
  LayerServer server(limits);
  const int idle = connected(server.port()), slow = connected(server.port());
  const std::string part = "GET /health HTTP/1.1\r\nHost:";
  ASSERT_EQ(send(slow, part.data(), part.size(), 0), ssize_t(part.size()));
  EXPECT_EQ(read_until_closed(idle), "");  // closed, not left open for the 10 s it waits
  const std::string timed_out = read_until_closed(slow);
  EXPECT_EQ(timed_out.rfind("HTTP/1.1 408 ", 0), 0u) << timed_out;
  close(idle);
  close(slow);
}

// What one request on a fresh connection gets (the layer answers a refusal and closes; so does a
// request with Connection: close).
std::string exchange(int port, const std::string& request) {
  const int fd = connected(port);
  EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
  const std::string answer = read_until_closed(fd);
  close(fd);
  return answer;
}

// A header value with a lone CR or a NUL is refused at once (a reader that splits lines on CR
// sees "X-A: a\rInjected: 1" as two headers), and so is a second Transfer-Encoding (chunked, then
// something else, is not chunked): both are requests two readers would read differently.
TEST(ServerHttp, ControlCharacterInAHeaderOrTwoTransferEncodingsGet400) {
  LayerServer server(HttpLimits{});
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (const std::string& header : {std::string("X-A: a\rInjected: 1"), std::string("X-A: a\0b", 8),
                                    std::string("X-A: a\x01")}) {
    const std::string answer = exchange(server.port(), health + header + "\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 ", 0), 0u) << ::testing::PrintToString(header) << answer;
    EXPECT_NE(answer.find("a header holds a control character"), std::string::npos) << answer;
  }
  EXPECT_EQ(exchange(server.port(), health + "X-A: a\tb\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);  // tab is fine
  const std::string chunked = "POST /size HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n";
  for (const char* second : {"gzip", "chunked"}) {
    const std::string answer =
        exchange(server.port(), chunked + "Transfer-Encoding: " + second + "\r\n\r\n2\r\nhi\r\n0\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 ", 0), 0u) << second << answer;
    EXPECT_NE(answer.find("two Transfer-Encoding headers"), std::string::npos) << answer;
  }
  EXPECT_EQ(after_head(exchange(server.port(), chunked + "\r\n2\r\nhi\r\n0\r\n\r\n")), "2");
}

// Lines that end with LF alone (a request typed into nc) are read as lines, head and chunked body
// alike, rather than left to wait for the read timeout (30 s here, longer than the test reads).
TEST(ServerHttp, BareLineFeedsAreAnsweredAtOnce) {
  LayerServer server(HttpLimits{});
  const std::string health = exchange(server.port(), "GET /health HTTP/1.1\nHost: x\nConnection: close\n\n");
  EXPECT_EQ(health.rfind("HTTP/1.1 200 ", 0), 0u) << health;
  EXPECT_EQ(after_head(health), "ok");
  const std::string chunked = exchange(
      server.port(), "POST /size HTTP/1.1\nHost: x\nConnection: close\nTransfer-Encoding: chunked\n\n5\nhello\n0\n\n");
  EXPECT_EQ(chunked.rfind("HTTP/1.1 200 ", 0), 0u) << chunked;
  EXPECT_EQ(after_head(chunked), "5");
}

// The bytes requests hold, all connections together, have a budget: a request whose declared body
// does not fit gets 503 with Retry-After at once (before its body is sent); the requests held are
// read on and answered, and once they are done their memory is free again.
TEST(ServerHttp, RequestBytesOverTheBudgetGet503) {
  HttpLimits limits;
  limits.max_body_bytes = 40000;
  limits.max_buffered_bytes = 128 << 10;  // three bodies of 40,000 bytes fit, four do not
  LayerServer server(limits);
  const std::string body(40000, 'a');
  const std::string head = "POST /size HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 40000\r\n\r\n";
  std::vector<int> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(connected(server.port()));
    const std::string start = head + body.substr(0, 1000);
    ASSERT_EQ(send(clients.back(), start.data(), start.size(), 0), ssize_t(start.size()));
  }
  // The one that did not fit (which one depends on the order the server read them in) is answered.
  std::vector<pollfd> polls;
  for (int fd : clients) polls.push_back({fd, POLLIN, 0});
  ASSERT_EQ(poll(polls.data(), polls.size(), 10000), 1);
  const size_t refused = size_t(std::find_if(polls.begin(), polls.end(), [](const pollfd& p) { return p.revents; }) -
                                polls.begin());
  const std::string answer = read_until_closed(clients[refused]);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("fill the server's memory for them"), std::string::npos) << answer;
  for (size_t i = 0; i < clients.size(); ++i) {
    if (i == refused) continue;
    ASSERT_EQ(send(clients[i], body.data() + 1000, body.size() - 1000, 0), ssize_t(body.size() - 1000));
    EXPECT_EQ(after_head(read_until_closed(clients[i])), "40000");
  }
  for (int fd : clients) close(fd);
  // Answered and closed, they hold nothing: three fit again (one at a time here).
  for (int i = 0; i < 3; ++i) EXPECT_EQ(after_head(exchange(server.port(), head + body)), "40000");
}

}  // namespace
}  // namespace r1pi
