// The prompt cache's scopes (--cache-scope, issue 47 item 3): a prefix one client left in a slot
// shows in the next request's cached_tokens and timings.cache_n, so a client that guesses another's
// prompt would learn how much of it was right. With --cache-scope user only requests with the same
// `user` field start from each other's prefixes; with shared, all do.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

#include "server/api_request.h"
#include "server/server.h"
#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"

namespace r1pi {
namespace {

using nlohmann::json;

// Every answer is one end-of-generation token: the test is about what the prompts leave behind.
class EndAtOnce final : public test::FakeTokenSource {
 public:
  explicit EndAtOnce(int32_t eos, int n_slots) : FakeTokenSource(256, n_slots), eos_(eos) {}
  int32_t pick(const Batch&, int, const Sampler&) override { return eos_; }

 private:
  int32_t eos_;
};

const Tokenizer& bytes() {
  static const Tokenizer t(builtin_byte_vocab(300));
  return t;
}

// cached_tokens of each completion request sent in order to one server, one at a time.
std::vector<int> cached_tokens(CacheScope scope, int n_slots, const std::vector<json>& requests) {
  EndAtOnce source(bytes().eos_id(), n_slots);
  ServeOptions options;
  options.port = 0;
  options.model_name = "bytes";
  options.cache_scope = scope;
  std::atomic<int> port{0};
  std::atomic<bool> stop{false};
  std::thread server([&] { serve_until(source, bytes(), options, [&] { return stop.load(); }, [&](int p) { port = p; }); });
  while (port == 0) std::this_thread::yield();
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(120, 0);
  std::vector<int> cached;
  for (const json& r : requests) {
    auto res = cli.Post("/v1/completions", r.dump(), "application/json");
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
    const json body = res && res->status == 200 ? json::parse(res->body) : json();
    cached.push_back(body.is_null() ? -1 : body["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>());
    if (!body.is_null()) {
      EXPECT_EQ(body["timings"]["cache_n"], cached.back());
    }
  }
  stop = true;
  server.join();
  return cached;
}

const std::string kSecret = "The launch code is 1234, and the rest of the prompt";
json ask(const std::string& prompt, const std::string& user) {
  json r = {{"prompt", prompt}, {"max_tokens", 1}, {"temperature", 0}};
  if (!user.empty()) r["user"] = user;
  return r;
}

TEST(CacheScope, AnotherUsersPrefixIsNotReusedNorShown) {
  for (int slots : {1, 3}) {
    SCOPED_TRACE(slots);
    // alice's secret, then bob guessing right: bob sees nothing of alice's, alice her own.
    const std::vector<int> c = cached_tokens(CacheScope::User, slots,
                                             {ask(kSecret, "alice"), ask(kSecret + " guessed", "bob"),
                                              ask(kSecret + " again", "alice")});
    EXPECT_EQ(c[0], 0);
    EXPECT_EQ(c[1], 0);
    // With one slot bob's request took alice's prefix away; with three it waits in its slot.
    if (slots > 1) EXPECT_GT(c[2], 40);
    else EXPECT_EQ(c[2], 0);
  }
}

TEST(CacheScope, RequestsWithoutAUserShareAsOneScope) {
  const std::vector<int> c = cached_tokens(CacheScope::User, 2, {ask(kSecret, ""), ask(kSecret + " more", "")});
  EXPECT_GT(c[1], 40);
}

TEST(CacheScope, SharedReusesAcrossUsers) {
  const std::vector<int> c =
      cached_tokens(CacheScope::Shared, 2, {ask(kSecret, "alice"), ask(kSecret + " guessed", "bob")});
  EXPECT_GT(c[1], 40);
}

TEST(CacheScope, UserMustBeAString) {
  EXPECT_THROW(parse_api_request(Endpoint::Completion, R"({"prompt": "a", "user": 7})", SamplerParams{}),
               std::exception);
}

}  // namespace
}  // namespace r1pi
