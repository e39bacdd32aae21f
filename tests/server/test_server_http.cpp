// The server's routes in-process, over real HTTP (cpp-httplib's client), with a scripted token
// source in place of a model: it "generates" a fixed DeepSeek-R1 answer, so that the reasoning
// split is seen end to end, streamed and not, with "</think>" as R1's single token and spelled in
// pieces over several tokens (a random-weight model never writes it). The queue, the API key and
// the error shapes are checked on the same server.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

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
// (EOS unless told: an endless script fills the context).
class ScriptedSource final : public TokenSource {
 public:
  explicit ScriptedSource(std::vector<int32_t> script, int32_t after = deepseek().eos_id())
      : script_(std::move(script)), after_(after) {}
  int n_ctx() const override { return 512; }
  int32_t forward(const int32_t*, int, int pos, Sampler* sampler) override {
    if (!sampler) return -1;
    if (pos == 0 || pos < last_pos_) next_ = 0;  // a new prompt: the script starts over
    last_pos_ = pos;
    return next_ < script_.size() ? script_[next_++] : after_;
  }
  // The server does not draft; a verification would take the script's next picks in turn.
  std::vector<int32_t> forward_each(const int32_t* tokens, int B, int pos, const Sampler& sampler) override {
    Sampler s = sampler;
    std::vector<int32_t> picks;
    for (int b = 0; b < B; ++b) picks.push_back(forward(tokens + b, 1, pos + b, &s));
    return picks;
  }

 private:
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
  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }

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

TEST(ServerHttp, ReasoningSplitStreamedAndWholeWithThinkEndAsOneTokenOrInPieces) {
  for (bool pieces : {false, true}) {
    ScriptedServer server(script(pieces), ServeOptions{});
    httplib::Client cli = server.client();
    const auto [reasoning, content] = streamed(cli, kChat + R"(, "stream": true})");
    EXPECT_EQ(reasoning, "Two and two.") << pieces;
    EXPECT_EQ(content, "\n\nIt is 4.") << pieces;
    auto whole = cli.Post("/v1/chat/completions", kChat + "}", "application/json");
    ASSERT_TRUE(whole);
    const json j = json::parse(whole->body);
    EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], "Two and two.");
    EXPECT_EQ(j["choices"][0]["message"]["content"], "\n\nIt is 4.");
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(j["usage"]["completion_tokens"], int(script(pieces).size()) + 1);  // and EOS
  }
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

}  // namespace
}  // namespace r1pi
