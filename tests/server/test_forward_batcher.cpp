// Continuous batching (server/forward_batcher.h): generations on their own threads and slots,
// their forwards run together, each get the tokens they get alone (greedy, sampled, penalised,
// speculative, a long prompt prefilled in chunks beside running decodes, any arrival order), and
// a new request takes the slot that holds the longest beginning of its prompt.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "server/forward_batcher.h"
#include "server/slot_table.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

struct Request {
  std::string prompt;
  GenerationOptions options;
  int start_after_ms = 0;  // arrival: after the others began
};

GenerationOptions options(float temperature, int n_predict, uint64_t seed, int batch = 16) {
  GenerationOptions o;
  o.n_predict = n_predict;
  o.batch_size = batch;
  o.sampler = {temperature, 40, 0.95f, seed};
  o.reuse_cache = true;
  o.ignore_eos = true;  // every request its whole length, overlapping the others
  return o;
}

std::vector<int32_t> tokens(const std::string& text) {
  return test::tiny_model(11).tokenizer->encode(text, true, true);
}

// One request alone on its own engine.
std::vector<int32_t> alone(const Request& r) {
  ThreadPool pool(1);
  NoSync sync;
  ModelForward forward(test::tiny_model(11).config, test::tiny_model(11).weights,
                       test::tiny_model(11).shard, 512, pool, sync);
  LocalTokenSource source(forward);
  return generate(source, *test::tiny_model(11).tokenizer, tokens(r.prompt), r.options, {}).generated;
}

// All requests at once, request i in slot i, as the server's engine thread drives them.
std::vector<std::vector<int32_t>> together(std::vector<Request> requests, ForwardBatcher::Stats& stats,
                                           int chunk = 0) {
  ThreadPool pool(2);
  NoSync sync;
  ModelForward forward(test::tiny_model(11).config, test::tiny_model(11).weights,
                       test::tiny_model(11).shard, 512, pool, sync, GgmlType::F32,
                       int(requests.size()));
  LocalTokenSource engine(forward);
  ForwardBatcher batcher(engine);
  std::vector<std::vector<int32_t>> out(requests.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].options.seq = int(i);
    batcher.join();
    threads.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(requests[i].start_after_ms));
      SlotSource source(batcher, engine, chunk);
      out[i] = generate(source, *test::tiny_model(11).tokenizer, tokens(requests[i].prompt), requests[i].options, {})
                   .generated;
      batcher.leave();
    });
  }
  while (batcher.members() > 0) batcher.run(std::chrono::milliseconds(100));
  for (std::thread& t : threads) t.join();
  stats = batcher.stats();
  return out;
}

TEST(ForwardBatcher, EachGenerationGetsItsTokensAlone) {
  std::vector<Request> requests = {
      {"Once upon a time", options(0.0f, 40, 0)},
      {"The little dog ran", options(0.9f, 25, 7)},
      {"A cat", options(1.2f, 50, 99, 1)},
      {"Tom and Sue went to the park", options(0.0f, 12, 0, 3)},
  };
  requests[1].options.sampler.penalties = {1.4f, 16, 0.3f, 0.2f};
  // A draft verified with the others' tokens in the same forward (a flat cost: every draft pays).
  requests[3].options.spec.enabled = true;
  requests[3].options.spec.cost = CostCurve::flat(16);
  // A long prompt that arrives while the others decode, prefilled 16 tokens per forward beside them.
  std::string long_prompt;
  for (int i = 0; i < 30; ++i) long_prompt += "word " + std::to_string(i) + " ";
  requests.push_back({long_prompt, options(0.0f, 20, 0), 20});
  for (int chunk : {0, 5}) {  // 5: prefill batches and verified drafts cut while the others run
    ForwardBatcher::Stats stats;
    const std::vector<std::vector<int32_t>> got = together(requests, stats, chunk);
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(int(got[i].size()), requests[i].options.n_predict) << "request " << i << ", chunk " << chunk;
      EXPECT_EQ(got[i], alone(requests[i])) << "request " << i << ", chunk " << chunk;
    }
    EXPECT_GT(stats.sequences, stats.forwards) << "no forward ran two generations together";
  }
}

TEST(ForwardBatcher, AnEngineErrorReachesTheCaller) {
  ThreadPool pool(1);
  NoSync sync;
  ModelForward forward(test::tiny_model(11).config, test::tiny_model(11).weights,
                       test::tiny_model(11).shard, 64, pool, sync, GgmlType::F32, 2);
  LocalTokenSource engine(forward);
  ForwardBatcher batcher(engine);
  batcher.join();
  std::string error;
  std::thread t([&] {
    SlotSource source(batcher, engine);
    const int32_t token = 1;
    try {
      feed(source, &token, 1, 100, nullptr, 0);  // past the context of 64
    } catch (const Error& e) {
      error = e.what();
    }
    batcher.leave();
  });
  while (batcher.members() > 0) batcher.run(std::chrono::milliseconds(100));
  t.join();
  EXPECT_NE(error.find("context overflow"), std::string::npos) << error;
}

TEST(SlotChoice, LongestBeginningAmongTheFreeSlotsAndCopiesFromABusyOne) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 9}, empty;
  int copy_from = -2;
  // Slot 1 holds more of the prompt than slot 2; slot 0 (busy) holds it all: copied into slot 1.
  EXPECT_EQ(choose_slot({&a, &b, &empty}, {false, true, true}, {1, 2, 3, 4, 5}, copy_from), 1);
  EXPECT_EQ(copy_from, 0);
  // The best free slot is the best slot: nothing to copy.
  EXPECT_EQ(choose_slot({&a, &b, &empty}, {true, true, true}, {1, 2, 3, 4, 5}, copy_from), 0);
  EXPECT_EQ(copy_from, -1);
  // No common beginning anywhere: the first free slot.
  EXPECT_EQ(choose_slot({&a, &b, &empty}, {false, true, true}, {7}, copy_from), 1);
  EXPECT_EQ(copy_from, -1);
  EXPECT_EQ(choose_slot({&a, &b}, {false, false}, {1}, copy_from), -1);
  // A beginning a slot cannot go on from (a window ring's) counts as none: nothing is copied from
  // slot 0, and with no slot able to go on the first free one is taken.
  auto only_slot_1 = [](int slot, int n) { return n == 0 || slot == 1; };
  EXPECT_EQ(choose_slot({&a, &b, &empty}, {false, true, true}, {1, 2, 3, 4, 5}, copy_from, only_slot_1), 1);
  EXPECT_EQ(copy_from, -1);
  auto none = [](int, int n) { return n == 0; };
  EXPECT_EQ(choose_slot({&a, &empty, &b}, {true, true, true}, {1, 2, 3, 4, 5}, copy_from, none), 0);
  EXPECT_EQ(copy_from, -1);
}

}  // namespace
}  // namespace r1pi
