// The prompt cache's promise: a prompt whose beginning came from the cache gives exactly the
// tokens a cold prefill of the whole prompt gives, greedy and sampled, whatever the batch size,
// and the cache is used (the count of reused tokens says so).
#include <gtest/gtest.h>

#include "runtime/generator.h"
#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

// A model and its KV cache, generating through the prompt cache (GenerationOptions::reuse_cache).
struct Engine {
  explicit Engine(int n_ctx = 256)
      : pool(2),
        forward(test::tiny_model().config, test::tiny_model().weights, test::tiny_model().shard, n_ctx, pool, sync),
        source(forward) {}
  GenerationResult generate(const std::vector<int32_t>& prompt, GenerationOptions o,
                            const std::function<void(const std::string&)>& on_text) {
    o.reuse_cache = true;
    GenerationResult r = r1pi::generate(source, *test::tiny_model().tokenizer, prompt, o, on_text);
    last_reused = r.cached_tokens;
    return r;
  }
  ThreadPool pool;
  NoSync sync;
  ModelForward forward;
  LocalTokenSource source;
  int last_reused = 0;
};

std::vector<int32_t> tokens(const std::string& text) { return test::tiny_model().tokenizer->encode(text, true, true); }

GenerationOptions options(float temperature, int batch_size, int n_predict = 20) {
  GenerationOptions o;
  o.n_predict = n_predict;
  o.batch_size = batch_size;
  o.sampler = {temperature, 40, 0.95f, 1234};
  return o;
}

TEST(PromptCache, ExtendedPromptGivesTheColdTokens) {
  const std::vector<int32_t> first = tokens("The first question, and its");
  const std::vector<int32_t> longer = tokens("The first question, and its follow-up that is longer");
  for (float temperature : {0.0f, 0.8f})
    for (int batch : {1, 64}) {
      Engine warm, cold;
      warm.generate(first, options(temperature, batch), {});
      const GenerationResult reused = warm.generate(longer, options(temperature, batch), {});
      const GenerationResult fresh = cold.generate(longer, options(temperature, batch), {});
      // The common beginning is the first prompt's tokens (the byte vocabulary: one per byte).
      EXPECT_EQ(warm.last_reused, int(first.size())) << batch;
      EXPECT_EQ(cold.last_reused, 0);
      EXPECT_EQ(reused.prefill_tokens, int(longer.size() - first.size()));
      EXPECT_EQ(reused.generated, fresh.generated) << "temperature " << temperature << ", batch " << batch;
    }
}

TEST(PromptCache, AConversationReusesItsOwnAnswer) {
  // The next turn begins with the prompt and the answer as fed: all of it is reused but the
  // answer's last token, which was sampled and never fed.
  Engine warm, cold;
  const std::vector<int32_t> turn = tokens("Q: hello A:");
  const GenerationResult answer = warm.generate(turn, options(0.0f, 64, 12), {});
  std::vector<int32_t> next = turn;
  next.insert(next.end(), answer.generated.begin(), answer.generated.end());
  const std::vector<int32_t> question = test::tiny_model().tokenizer->encode(" Q: and then? A:", false, true);
  next.insert(next.end(), question.begin(), question.end());
  const GenerationResult second = warm.generate(next, options(0.0f, 64, 12), {});
  EXPECT_EQ(warm.last_reused, int(turn.size() + answer.generated.size() - 1));
  EXPECT_EQ(second.generated, cold.generate(next, options(0.0f, 64, 12), {}).generated);
}

TEST(PromptCache, ADifferentPromptReusesOnlyTheCommonBeginning) {
  Engine warm, cold;
  warm.generate(tokens("abcdef"), options(0.0f, 64), {});
  const std::vector<int32_t> other = tokens("abcXYZ");
  const GenerationResult r = warm.generate(other, options(0.0f, 64), {});
  EXPECT_EQ(warm.last_reused, int(tokens("abc").size()));
  EXPECT_EQ(r.generated, cold.generate(other, options(0.0f, 64), {}).generated);
  // The same prompt again: all but its last token.
  warm.generate(other, options(0.0f, 64), {});
  EXPECT_EQ(warm.last_reused, int(other.size()) - 1);
}

TEST(PromptCache, CancelledEndsBeforeTheNextToken) {
  Engine e;
  GenerationOptions o = options(0.0f, 64, 50);
  int seen = 0;
  o.cancelled = [&] { return seen >= 3; };
  const GenerationResult r = e.generate(tokens("stop soon"), o, [&](const std::string&) { ++seen; });
  EXPECT_EQ(r.stop_reason, "cancelled");
  EXPECT_EQ(r.generated.size(), 3u);
}

}  // namespace
}  // namespace r1pi
