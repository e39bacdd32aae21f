// A batch of sequences (layers/batch.h): sequences of different prompts, lengths and positions
// decoded in one forward pass get exactly the logits and tokens each gets alone, greedy and
// sampled, on every backend of this build, with slots freed and taken again; the KV cache's slots
// know what they hold, and the forward refuses batches it cannot run. (The same on 2-4 ranks:
// tests/mpi/mpi_batched_sequences.cpp.)
#include <gtest/gtest.h>

#include <cstring>

#include "common/error.h"
#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "runtime/generator.h"
#include "sequence_batch.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

// An engine of n_seqs slots on backend k.
struct Engine {
  Engine(const Kernels& k, int n_seqs, GgmlType kv_type = GgmlType::F32, int n_ctx = 96)
      : pool(2),
        forward(test::tiny_model(11).config, test::tiny_model(11).weights, test::tiny_model(11).shard, n_ctx, pool, sync,
                kv_type, n_seqs, k),
        source(forward) {}
  ThreadPool pool;
  NoSync sync;
  ModelForward forward;
  LocalTokenSource source;
};

// What generate() gives the sequence with nothing else in the engine.
std::vector<int32_t> alone(const Kernels& k, const test::SequenceRun& r) {
  Engine e(k, 1);
  GenerationOptions o;
  o.n_predict = r.n_predict;
  o.batch_size = r.chunk;
  o.sampler = r.sampler;
  o.ignore_eos = true;
  return generate(e.source, *test::tiny_model(11).tokenizer, r.prompt, o, {}).generated;
}

// 2 sequences in 2 slots, and 8 in 4 slots (each slot freed and taken again).
TEST(BatchedSequences, EachSequenceGetsItsTokensAlone) {
  for (const Kernels* k : available_backends())
    for (const auto& [n, slots] : {std::pair{2, 2}, std::pair{8, 4}}) {
      const std::vector<test::SequenceRun> runs =
          test::mixed_sequences(n, int32_t(test::tiny_model(11).config.n_vocab));
      Engine e(*k, slots);
      const std::vector<std::vector<int32_t>> batched = test::run_batched(e.source, runs);
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(batched[size_t(i)], alone(*k, runs[size_t(i)]))
            << k->name << ", " << n << " sequences, sequence " << i
            << (runs[size_t(i)].sampler.temperature > 0 ? " (sampled)" : " (greedy)");
    }
}

// Teacher-forced: every sequence's tokens fed in pieces of its own size beside the others', a
// logit row after every token, against the rows of the sequence fed alone one token at a time.
TEST(BatchedSequences, LogitRowsAreTheRowsAlone) {
  const int V = int(test::tiny_model(11).config.n_vocab), n = 5;
  std::vector<test::SequenceRun> runs = test::mixed_sequences(n, V);
  for (test::SequenceRun& r : runs) r.prompt.resize(std::min<size_t>(r.prompt.size(), 24));
  for (const Kernels* k : available_backends())
    for (GgmlType kv : {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0}) {
      std::vector<std::vector<float>> want(n);
      for (int i = 0; i < n; ++i) {
        Engine e(*k, 1, kv);
        const std::vector<int32_t>& t = runs[size_t(i)].prompt;
        for (size_t p = 0; p < t.size(); ++p) {
          const std::vector<float>& row = e.forward.forward(Batch::run(&t[p], 1, int(p), LogitsFor::Last));
          want[size_t(i)].insert(want[size_t(i)].end(), row.begin(), row.end());
        }
      }
      Engine e(*k, n, kv);
      std::vector<int> fed(n, 0);
      std::vector<std::vector<float>> got(n);
      for (int step = 0; step < 64; ++step) {
        Batch b;
        for (int j = 0; j < n; ++j) {
          const int i = (j + step) % n;  // a rotating order
          const std::vector<int32_t>& t = runs[size_t(i)].prompt;
          const int m = std::min(runs[size_t(i)].chunk, int(t.size()) - fed[size_t(i)]);
          if (step < runs[size_t(i)].start_step || m <= 0) continue;
          b.add_run(&t[size_t(fed[size_t(i)])], m, i, fed[size_t(i)], LogitsFor::All);
          fed[size_t(i)] += m;
        }
        if (b.size() == 0) continue;
        const std::vector<float>& rows = e.forward.forward(b);
        for (int r = 0; r < b.size(); ++r)
          got[size_t(b.seqs[size_t(r)])].insert(got[size_t(b.seqs[size_t(r)])].end(), rows.begin() + r * V,
                                                rows.begin() + (r + 1) * V);
      }
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(got[size_t(i)].size(), want[size_t(i)].size()) << i;
        EXPECT_TRUE(test::same_floats(got[size_t(i)].data(), want[size_t(i)].data(), want[size_t(i)].size()))
            << k->name << ", KV " << ggml_type_name(kv) << ", sequence " << i;
      }
    }
}

TEST(KvCacheSlots, KnowTheirTokensTruncateAndCopy) {
  Engine e(kernels(), 3);
  const std::vector<int32_t> a = {5, 6, 7, 8}, b = {9, 10};
  e.forward.forward(Batch::run(a.data(), 4, 0, LogitsFor::None, 0));
  e.forward.forward(Batch::run(b.data(), 2, 0, LogitsFor::Last, 2));
  EXPECT_EQ(e.source.cached(0), a);
  EXPECT_TRUE(e.source.cached(1).empty());
  EXPECT_EQ(e.source.cached(2), b);
  // A forward at position 2 forgets what lay at 2 and after.
  e.forward.forward(Batch::run(b.data(), 1, 2, LogitsFor::None, 0));
  EXPECT_EQ(e.source.cached(0), (std::vector<int32_t>{5, 6, 9}));
  e.source.truncate(0, 1);
  EXPECT_EQ(e.source.cached(0), (std::vector<int32_t>{5}));
  e.source.copy(2, 1);
  EXPECT_EQ(e.source.cached(1), b);
  // The copy's keys and values are the source slot's: continuing either gives the same logits.
  const int32_t next = 11;
  const std::vector<float> from_copy = e.forward.forward(Batch::run(&next, 1, 2, LogitsFor::Last, 1));
  const std::vector<float> from_source = e.forward.forward(Batch::run(&next, 1, 2, LogitsFor::Last, 2));
  EXPECT_TRUE(test::same_floats(from_copy.data(), from_source.data(), from_source.size()));
}

// A prompt cache shared across slots: a slot holding a copy of another's conversation continues
// it as a cold prefill of the whole prompt would.
TEST(KvCacheSlots, ACopiedSlotServesAPromptCache) {
  const std::vector<int32_t> first = {1, 40, 41, 42, 43, 44}, longer = {1, 40, 41, 42, 43, 44, 45, 46, 47};
  GenerationOptions o;
  o.n_predict = 6;
  o.sampler = {0.8f, 40, 0.95f, 99};
  o.reuse_cache = true;
  Engine warm(kernels(), 2), cold(kernels(), 1);
  generate(warm.source, *test::tiny_model(11).tokenizer, first, o, {});
  warm.source.copy(0, 1);
  o.seq = 1;
  const GenerationResult reused = generate(warm.source, *test::tiny_model(11).tokenizer, longer, o, {});
  o.seq = 0;
  const GenerationResult fresh = generate(cold.source, *test::tiny_model(11).tokenizer, longer, o, {});
  EXPECT_EQ(reused.cached_tokens, int(first.size()));
  EXPECT_EQ(reused.generated, fresh.generated);
}

TEST(BatchedSequences, RefusesWhatItCannotRun) {
  Engine e(kernels(), 2, GgmlType::F32, 8);
  const int32_t t[3] = {5, 6, 7};
  auto error = [&](const Batch& b) { return test::error_of([&] { e.forward.forward(b); }); };
  EXPECT_EQ(error(Batch::run(t, 1, 0, LogitsFor::Last, 2)), "sequence 2 has no slot (the cache holds 2)");
  EXPECT_EQ(error(Batch::run(t, 1, 1, LogitsFor::Last, 0)), "sequence 0 continues at position 1 but its slot holds 0 positions");
  Batch gap;
  gap.add(5, 1, 0, false);
  gap.add(6, 1, 2, true);
  EXPECT_EQ(error(gap), "sequence 1's tokens are at positions 0 then 2 (they must follow each other)");
  EXPECT_NE(error(Batch::run(t, 1, 8, LogitsFor::Last)).find("context overflow"), std::string::npos);
  EXPECT_EQ(error(Batch{}), "forward: empty batch");
  EXPECT_TRUE(e.source.cached(1).empty());  // nothing ran
}

}  // namespace
}  // namespace r1pi
