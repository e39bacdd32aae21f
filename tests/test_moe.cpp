// The mixture of experts (qwen3moe): the routing (moe_routing.h), the split of the experts over
// ranks (Shard::expert_units) and the forward's bytes, which must not depend on the threads, the
// batch, the other sequences of a batch or the backend. The math against an independent reference
// is test_reference_forward's (Qwen3MoeTiny*), and against llama.cpp tests/llamacpp's.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "layers/moe_routing.h"
#include "model/model_loader.h"
#include "neon/kernels.h"
#include "runtime/generator.h"
#include "test_support.h"
#include "gguf/gguf_file.h"
#include "tools/model_maker.h"
#include "tools/quantize_model.h"

namespace r1pi {
namespace {

std::vector<ExpertChoice> choose(std::vector<float> logits, int k, const Kernels& kern = kernels_scalar()) {
  std::vector<ExpertChoice> chosen(static_cast<size_t>(k));
  choose_experts(logits.data(), int(logits.size()), k, chosen.data(), kern);
  return chosen;
}

std::vector<uint32_t> experts_of(const std::vector<ExpertChoice>& chosen) {
  std::vector<uint32_t> e;
  for (const ExpertChoice& c : chosen) e.push_back(c.expert);
  return e;
}

// The most probable first; equal logits (so equal probabilities) go to the lower index, here at
// the top, in the middle and at the cut between chosen and not chosen.
TEST(MoeRouting, MostProbableFirstTiesToTheLowerIndex) {
  EXPECT_EQ(experts_of(choose({0.1f, 2.0f, -1.0f, 0.5f, 3.0f}, 3)), (std::vector<uint32_t>{4, 1, 3}));
  EXPECT_EQ(experts_of(choose({1.0f, 1.0f, 1.0f, 1.0f}, 2)), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(experts_of(choose({0.0f, 5.0f, 2.0f, 5.0f, 2.0f, 2.0f}, 4)), (std::vector<uint32_t>{1, 3, 2, 4}));
  EXPECT_EQ(experts_of(choose({-3.0f, -3.0f, 7.0f}, 3)), (std::vector<uint32_t>{2, 0, 1}));
}

// Weights: each chosen probability (the softmax kernel's) over the sum of the chosen ones, summed
// in the order of the choices: softmax, then top-k, then normalise, as llama.cpp's build_moe_ffn.
TEST(MoeRouting, WeightsAreTheChosenProbabilitiesOverTheirSum) {
  const std::vector<float> logits = {0.3f, -1.2f, 2.5f, 0.9f, 1.7f, -0.4f, 0.0f, 1.1f};
  std::vector<float> probs = logits;
  kernels_scalar().softmax(probs.data(), int64_t(probs.size()));
  const std::vector<ExpertChoice> chosen = choose(logits, 3);
  ASSERT_EQ(experts_of(chosen), (std::vector<uint32_t>{2, 4, 7}));
  const float sum = (probs[2] + probs[4]) + probs[7];
  EXPECT_EQ(chosen[0].weight, probs[2] / sum);
  EXPECT_EQ(chosen[1].weight, probs[4] / sum);
  EXPECT_EQ(chosen[2].weight, probs[7] / sum);
  EXPECT_NEAR(chosen[0].weight + chosen[1].weight + chosen[2].weight, 1.0f, 1e-6f);
  // All experts chosen: the weights are the probabilities themselves (up to the sum's rounding).
  const std::vector<ExpertChoice> all = choose(logits, 8);
  for (const ExpertChoice& c : all) EXPECT_NEAR(c.weight, probs[c.expert], 1e-6f);
  // The softmax is shift-invariant: so is the choice.
  std::vector<float> shifted = logits;
  for (float& v : shifted) v += 40.0f;
  EXPECT_EQ(experts_of(choose(shifted, 3)), experts_of(chosen));
}

// Every backend's softmax gives the reference's bytes, so every backend picks the same experts
// with the same weights (128 experts, 8 used: Qwen3-30B-A3B's router).
TEST(MoeRouting, EveryBackendChoosesTheSame) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const std::vector<float> logits = test::random_row(128, seed, 3.0f);
    const std::vector<ExpertChoice> want = choose(logits, 8);
    for (const Kernels* k : available_backends()) {
      const std::vector<ExpertChoice> got = choose(logits, 8, *k);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(ExpertChoice)), 0) << k->name;
    }
  }
}

// ---- the split ------------------------------------------------------------------------------

ModelConfig moe_shape(uint32_t experts, uint32_t ffn, uint32_t block) {
  ModelConfig c = test::llama_shape(256, 2, 8, 4, 768, 512);
  c.n_experts = experts;
  c.n_experts_used = 2;
  c.expert_ffn_dim = ffn;
  c.expert_block = block;
  return c;
}

// Each expert's units are held by exactly one rank, in whole blocks; each rank holds the blocks of
// a layer to within one, and of each expert to within one (Q4_0's 24 blocks of Qwen3-30B-A3B's 768
// units: a quarter of every expert at np 4; Q4_K's 3 super-blocks: 96 of 384 on each of 4 ranks).
TEST(MoeSplit, EveryUnitOnceBalancedOnWholeBlocks) {
  for (const auto& [experts, ffn, block] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{
           {128, 768, 32}, {128, 768, 256}, {16, 96, 32}, {5, 64, 32}}) {
    const ModelConfig c = moe_shape(experts, ffn, block);
    const uint32_t blocks = ffn / block;
    for (int n = 1; n <= 4; ++n) {
      SCOPED_TRACE(std::to_string(experts) + " experts of " + std::to_string(blocks) + " blocks, np " + std::to_string(n));
      std::vector<std::vector<int>> owner(experts, std::vector<int>(ffn, -1));
      for (int r = 0; r < n; ++r) {
        const Shard s = Shard::for_rank(c, r, n);
        ASSERT_EQ(s.expert_units.size(), experts);
        EXPECT_EQ(s.ffn.size(), 0u);  // no dense FFN
        uint32_t held = 0;
        for (uint32_t e = 0; e < experts; ++e) {
          const Range u = s.expert_units[e];
          EXPECT_EQ(u.begin % block, 0u);
          EXPECT_EQ(u.end % block, 0u);
          EXPECT_LE(u.size() / block, (blocks + uint32_t(n) - 1) / uint32_t(n));
          EXPECT_GE(u.size() / block, blocks / uint32_t(n));
          for (uint32_t j = u.begin; j < u.end; ++j) {
            EXPECT_EQ(owner[e][j], -1) << "expert " << e << " unit " << j;
            owner[e][j] = r;
          }
          held += u.size() / block;
        }
        const uint32_t total = experts * blocks;
        EXPECT_LE(held, (total + uint32_t(n) - 1) / uint32_t(n));
        EXPECT_GE(held, total / uint32_t(n));
      }
      for (uint32_t e = 0; e < experts; ++e)
        for (uint32_t j = 0; j < ffn; ++j) ASSERT_NE(owner[e][j], -1) << "expert " << e << " unit " << j;
    }
  }
}

// --shard-weights 2,1,1 on Q4_0's 24 blocks per expert: every unit held once, rank 0 about half
// of each expert (12 blocks, the others 6).
TEST(MoeSplit, WeightsShareEveryExpert) {
  const ModelConfig c = moe_shape(16, 768, 32);
  const ShardWeights w = {2, 1, 1};
  std::vector<std::vector<int>> owner(16, std::vector<int>(768, -1));
  for (int r = 0; r < 3; ++r) {
    const Shard s = Shard::for_rank(c, r, 3, w);
    for (uint32_t e = 0; e < 16; ++e) {
      const Range u = s.expert_units[e];
      EXPECT_EQ(u.size() / 32, r == 0 ? 12u : 6u) << "rank " << r << " expert " << e;
      for (uint32_t j = u.begin; j < u.end; ++j) {
        EXPECT_EQ(owner[e][j], -1);
        owner[e][j] = r;
      }
    }
  }
  for (const auto& units : owner) EXPECT_EQ(std::count(units.begin(), units.end(), -1), 0);
}

TEST(MoeSplit, RefusesMoreRanksThanExpertBlocks) {
  const ModelConfig c = moe_shape(1, 64, 32);  // 2 blocks in all; 4 KV heads allow 4 ranks
  EXPECT_NO_THROW(Shard::for_rank(c, 1, 2));
  EXPECT_EQ(test::error_of([&] { Shard::for_rank(c, 0, 3); }),
            "cannot split ffn_down_exps (1 experts of 64 units, blocks of 32) over 3 ranks: use at most 2 ranks");
}

// ---- the files --------------------------------------------------------------------------------

// As llama-quantize: the router stays F32, ffn_down_exps follows ffn_down's rule (Q4_K_M: Q6_K in
// the layers that get more bits; rows of 96 units hold no super-block, so its fallback), and
// quantizing an F32 file gives the bytes r1pi-model make --type writes.
TEST(MoeFiles, QuantizeKeepsTheRouterAndMatchesMake) {
  MakeOptions o{.arch = "qwen3moe", .preset = "tiny", .n_layers = 1, .matrix_type = GgmlType::F32,
                .output_type = GgmlType::F32, .progress = false};
  const std::string f32 = test::make_model_file("moe_f32", o);
  const std::string quantized = test::scratch_dir("moe_quantize") + "/q4_k_m.gguf";
  quantize_model(f32, quantized, "q4_k_m", false);
  o.mix = quant_mix_named("q4_k_m");
  const std::string made = test::make_model_file("moe_q4_k_m", o);
  EXPECT_EQ(test::read_file(quantized), test::read_file(made));
  const GgufFile f = GgufFile::open(quantized);
  EXPECT_EQ(f.find_tensor("blk.0.ffn_gate_inp.weight")->type, GgmlType::F32);
  EXPECT_EQ(f.find_tensor("blk.0.ffn_gate_exps.weight")->type, GgmlType::Q4_K);
  // One layer is the last eighth (use_more_bits): Q6_K, whose fallback for rows of 96 is Q8_0.
  EXPECT_EQ(f.find_tensor("blk.0.ffn_down_exps.weight")->type, GgmlType::Q8_0);
}

// ---- the forward ----------------------------------------------------------------------------

// The tiny qwen3moe preset, 2 layers (16 experts of 96 units, 4 per token).
const std::string& tiny_moe() {
  static const std::string path = test::make_model_file(
      "moe_tiny", {.arch = "qwen3moe", .preset = "tiny", .n_layers = 2, .seed = 5, .progress = false});
  return path;
}

std::vector<int32_t> some_tokens(int n, uint32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = int32_t((uint32_t(i) * 2654435761u + seed * 40503u) % 512u);
  return t;
}

// The same logits bytes with 1 or 2 threads and in batches of 1, 3 or all 13 tokens (tokens choose
// different experts, so a batch groups them differently each time).
TEST(MoeForward, SameBytesForAnyThreadsAndBatch) {
  const LoadedModel m = load_model(tiny_moe());
  ASSERT_EQ(m.config.n_experts, 16u);
  const std::vector<int32_t> tokens = some_tokens(13, 1);
  ThreadPool one(1), two(2);
  const std::vector<float> want = test::chunked_logits(m, tokens, 1, one);
  for (int chunk : {1, 3, 13})
    for (ThreadPool* pool : {&one, &two}) {
      const std::vector<float> got = test::chunked_logits(m, tokens, chunk, *pool);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << "batch " << chunk << ", " << pool->size() << " threads";
    }
}

// Two sequences in one batch: each gets the logits it gets alone, although the batch groups both
// sequences' tokens by expert.
TEST(MoeForward, ASequenceGetsItsBytesWhateverElseIsInTheBatch) {
  const LoadedModel m = load_model(tiny_moe());
  ThreadPool pool(2);
  EXPECT_TRUE(test::batched_like_alone(m, some_tokens(7, 2), some_tokens(5, 3), 16, pool));
}

// At 4 ranks each rank holds about a quarter of every layer's expert bytes (3 Q4_0 blocks per
// expert over 4 ranks: 12 of the 48 blocks of a layer each), and the other tensors as the dense
// split; the shards together hold the file's expert bytes exactly once.
TEST(MoeForward, FourRanksHoldAQuarterOfTheExperts) {
  const LoadedModel whole = load_model(tiny_moe());
  auto expert_bytes = [](const LoadedModel& m) {
    size_t bytes = 0;
    for (const LayerWeights& L : m.weights.layers)
      for (const std::vector<Matrix>* v : {&L.gate_exps, &L.up_exps, &L.down_exps})
        for (const Matrix& w : *v) bytes += w.bytes();
    return bytes;
  };
  const size_t all = expert_bytes(whole);
  size_t sum = 0;
  for (int r = 0; r < 4; ++r) {
    const LoadedModel m = load_model(tiny_moe(), false, r, 4);
    const size_t mine = expert_bytes(m);
    EXPECT_EQ(mine * 4, all) << "rank " << r;
    sum += mine;
    for (const LayerWeights& L : m.weights.layers) EXPECT_EQ(L.router.bytes(), whole.weights.layers[0].router.bytes());
  }
  EXPECT_EQ(sum, all);
}

// Speculative decoding verifies drafts in batches, which group their tokens by expert: it must give
// plain decoding's ids (a repetitive prompt, so that drafts are both accepted and rejected).
TEST(MoeForward, SpeculativeDecodingGivesPlainDecodingsIds) {
  // The whole tiny preset, seed 7 (tests/mpi's qwen3moe.gguf): its text repeats itself here.
  const LoadedModel m = load_model(test::make_model_file(
      "moe_tiny_seed7", {.arch = "qwen3moe", .preset = "tiny", .seed = 7, .progress = false}));
  auto run = [&](bool speculate) {
    ThreadPool pool(1);  // threads are SameBytesForAnyThreadsAndBatch's
    NoSync sync;
    ModelForward forward(m.config, m.weights, m.shard, 256, pool, sync);
    LocalTokenSource source(forward);
    GenerationOptions o;
    o.n_predict = 48;
    o.sampler.temperature = 0;
    o.spec.enabled = speculate;
    o.spec.cost = CostCurve::flat(16);  // draft whenever the history offers a continuation
    o.spec.max_draft = 6;
    return generate(source, *m.tokenizer, m.tokenizer->encode("the cat the cat the cat the cat the cat the cat", true, true), o, {});
  };
  const GenerationResult plain = run(false), spec = run(true);
  EXPECT_EQ(spec.generated, plain.generated);
  EXPECT_GT(spec.spec.accepted, 0);
  EXPECT_LT(spec.spec.accepted, spec.spec.drafted);
}

}  // namespace
}  // namespace r1pi
