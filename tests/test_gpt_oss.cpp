// gpt-oss's parts one by one, from shared/data/gptoss/ARCH_FACTS.md section 4 (written out here):
// the router (top-k of the logits, then the softmax over them), the clamped SwiGLU, YaRN's angles
// and scale, and what a file must hold. The whole forward against an independent reference:
// test_reference_forward.cpp (GptOss*); against llama.cpp: tests/llamacpp (gpt-oss, gpt-oss with
// MXFP4 experts); sinks and window: test_attention.cpp; ranks: tests/mpi; speculative decoding:
// test_speculative_models.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "layers/shard_sync.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "layers/ffn_activation.h"
#include "layers/moe_routing.h"
#include "layers/rope_table.h"
#include "model/arch/architectures.h"
#include "model/model_config.h"
#include "model/model_loader.h"
#include "model/shard.h"
#include "runtime/generator.h"
#include "runtime/token_source.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

using test::error_of;
using test::scratch_dir;

TEST(GptOssRouting, TheKLargestLogitsThenTheSoftmaxOverThem) {
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.0f, 3.0f, 1.5f};
  std::vector<float> in = logits;
  std::vector<ExpertChoice> chosen(3);
  choose_experts(in.data(), int(in.size()), 3, chosen.data(), kernels_scalar(), ExpertGating::TopKSoftmax);
  // Largest first, ties to the lower index.
  EXPECT_EQ(chosen[0].expert, 1u);
  EXPECT_EQ(chosen[1].expert, 4u);
  EXPECT_EQ(chosen[2].expert, 3u);
  EXPECT_EQ(in, logits) << "the logits are left as they were";
  const double z = 2 * std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(chosen[0].weight, std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(chosen[1].weight, std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(chosen[2].weight, std::exp(2.0) / z, 1e-6);
  // The softmax kernel's bytes: every backend weighs alike.
  for (const Kernels* k : available_backends()) {
    std::vector<ExpertChoice> again(3);
    in = logits;
    choose_experts(in.data(), int(in.size()), 3, again.data(), *k, ExpertGating::TopKSoftmax);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(again[size_t(i)].weight, chosen[size_t(i)].weight) << k->name;
  }
}

TEST(GptOssActivation, GateClampedAboveUpClampedBothWaysPlusOne) {
  const std::vector<float> g0 = {-20.0f, -1.0f, 0.0f, 0.5f, 6.9f, 7.0f, 30.0f, 3.0f, 3.0f};
  const std::vector<float> u = {1.0f, 2.0f, 5.0f, -0.5f, 0.0f, 1.0f, 1.0f, -30.0f, 30.0f};
  std::vector<float> g = g0;
  swiglu_oai(g.data(), u.data(), int64_t(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double gate = std::min(double(g0[i]), 7.0), up = std::clamp(double(u[i]), -7.0, 7.0);
    const double want = gate / (1 + std::exp(-1.702 * gate)) * (up + 1);
    EXPECT_NEAR(g[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << "g " << g0[i] << " u " << u[i];
  }
  EXPECT_EQ(g[5], g[6]) << "a gate above 7 counts as 7";
  EXPECT_NEAR(g[7], 3.0 / (1 + std::exp(-1.702 * 3.0)) * -6.0, 1e-4) << "up below -7 counts as -7";
  EXPECT_GT(g[0], -1e-6f) << "a very negative gate gives about 0";
}

// YaRN on gpt-oss's shape (head 64, base 150000, factor 32, original context 4096): pairs 0..8 keep
// their frequency, pairs 18.. take it divided by 32, the ramp between; cos and sin scaled by
// 1 + 0.1 ln 32 = 1.3465736 (ARCH_FACTS.md 4.1: low 8, high 18).
TEST(GptOssRope, YarnAnglesAndScale) {
  ModelConfig c;
  c.arch = &gpt_oss_architecture();
  c.head_dim = c.rope_dim = 64;
  c.rope_base = 150000.0f;
  c.yarn_factor = 32.0f;
  c.yarn_original_context = 4096;
  RopeTable rope(c);
  const int pos = 1000;
  const double mscale = 1 + 0.1 * std::log(32.0);
  EXPECT_NEAR(mscale, 1.3465736, 1e-7);
  for (int j = 0; j < 32; ++j) {
    // A head whose only nonzero element is j: NEOX rotation gives x[j] = cos, x[j + 32] = sin.
    std::vector<float> x(64, 0.0f);
    x[size_t(j)] = 1.0f;
    rope.rotate(x.data(), 1, pos, kernels_scalar());
    const double extrap = pos * std::pow(150000.0, -2.0 * j / 64), interp = extrap / 32;
    const double ramp = 1 - std::clamp((j - 8.0) / 10.0, 0.0, 1.0);
    const double theta = interp * (1 - ramp) + extrap * ramp;
    EXPECT_NEAR(x[size_t(j)], std::cos(theta) * mscale, 2e-6) << "pair " << j;
    EXPECT_NEAR(x[size_t(j) + 32], std::sin(theta) * mscale, 2e-6) << "pair " << j;
  }
}

// A made tiny file, read back: every hyper-parameter row.
TEST(GptOssFile, KeysReadBack) {
  MakeOptions o;
  o.arch = "gpt-oss";
  o.progress = false;
  const std::string path = scratch_dir("gpt_oss_keys") + "/m.gguf";
  make_model(o, path);
  const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(path));
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.q_dim(), 512u) << "heads x 64, not dim";
  EXPECT_EQ(c.sliding_window, 8u);
  EXPECT_EQ(c.swa_period, 2u);
  EXPECT_EQ(c.window_of(0), 8u);
  EXPECT_EQ(c.window_of(1), 0u);
  EXPECT_EQ(c.window_of(2), 8u);
  EXPECT_EQ(c.yarn_factor, 32.0f);
  EXPECT_EQ(c.yarn_original_context, 4096u);
  EXPECT_EQ(c.rope_base, 150000.0f);
  EXPECT_EQ(c.n_experts, 16u);
  EXPECT_EQ(c.n_experts_used, 4u);
  EXPECT_EQ(c.expert_ffn_dim, 96u);
}

// The tiny preset cut to 2 layers: a window layer (8 positions) and a full one.
LoadedModel two_layer_model(const std::string& name) {
  MakeOptions o;
  o.arch = "gpt-oss";
  o.n_layers = 2;
  o.progress = false;
  return load_model(test::make_model_file(name, o));
}

// Continuous batching (--parallel): two sequences in one batch, both past the window of 8, each
// get the logits they get alone, whatever the batch groups by expert.
TEST(GptOssForward, ASequenceGetsItsBytesWhateverElseIsInTheBatch) {
  const LoadedModel m = two_layer_model("gpt_oss_batch");
  ThreadPool pool(2);
  std::vector<int32_t> a(19), b(13);
  for (size_t i = 0; i < a.size(); ++i) a[i] = int32_t((i * 2654435761u + 7u) % 512u);
  for (size_t i = 0; i < b.size(); ++i) b[i] = int32_t((i * 40503u + 11u) % 512u);
  EXPECT_TRUE(test::batched_like_alone(m, a, b, 64, pool));
}

// The window layers' rings (KvCache, max_run 3: the window of 8 plus 2 positions): every way of
// feeding a sequence gives, row for row, the logits of a cache that keeps every position: prompt
// runs shorter and longer than max_run (in passes), decode steps past the ring's end many times,
// a rollback of up to max_run positions (a rejected draft), one further back (fed again from the
// start), a copied slot and two sequences in one batch.
TEST(GptOssForward, WindowRingsGiveTheBytesOfAWholeCache) {
  const LoadedModel m = two_layer_model("gpt_oss_ring");
  ASSERT_EQ(m.config.window_of(0), 8u);
  ThreadPool pool(2);
  NoSync sync;
  std::vector<int32_t> t(60);
  for (size_t i = 0; i < t.size(); ++i) t[i] = int32_t((i * 2654435761u + 5u) % 512u);
  // The reference: every position kept, the tokens one at a time.
  ModelForward whole(m.config, m.weights, m.shard, 64, pool, sync);
  std::vector<std::vector<float>> want;
  for (int p = 0; p < int(t.size()); ++p) want.push_back(whole.forward(Batch::run(&t[size_t(p)], 1, p, LogitsFor::All)));
  ModelForward ring(m.config, m.weights, m.shard, 64, pool, sync, GgmlType::F32, 2, kernels(), 3);
  EXPECT_EQ(ring.cache().positions(0), 10);  // window 8 + max_run 3 - 1
  EXPECT_EQ(ring.cache().positions(1), 64);
  EXPECT_EQ(ring.kv_cache_bytes(), whole.kv_cache_bytes() * 2 * (10 + 64) / (64 + 64));  // two slots
  // Feeds t[from, to) at their positions into slot seq; true when each row is the reference's.
  auto feed = [&](int from, int to, int seq) {
    const std::vector<float>& got = ring.forward(Batch::run(&t[size_t(from)], to - from, from, LogitsFor::All, seq));
    const size_t v = want[0].size();
    for (int p = from; p < to; ++p)
      if (std::memcmp(&got[size_t(p - from) * v], want[size_t(p)].data(), v * sizeof(float)) != 0) return false;
    return true;
  };
  EXPECT_TRUE(feed(0, 7, 0));    // three passes
  EXPECT_TRUE(feed(7, 9, 0));
  for (int p = 9; p < 30; ++p) ASSERT_TRUE(feed(p, p + 1, 0)) << p;  // around the ring twice
  EXPECT_TRUE(ring.cache().resumable(0, 27));
  EXPECT_TRUE(feed(27, 30, 0));  // three positions back: the ring still holds the window before
  EXPECT_FALSE(ring.cache().resumable(0, 20));
  EXPECT_TRUE(feed(20, 24, 0));  // ten back: slot 0 fed again from its start
  EXPECT_TRUE(feed(24, 40, 0));
  ring.cache().copy(0, 1);
  EXPECT_TRUE(feed(40, 41, 1));  // the copy continues as the original
  // Both slots in one batch, each a run longer than max_run.
  Batch both;
  both.add_run(&t[40], 5, 0, 40, LogitsFor::All);
  both.add_run(&t[41], 5, 1, 41, LogitsFor::Last);
  const std::vector<float>& got = ring.forward(both);
  const size_t v = want[0].size();
  ASSERT_EQ(got.size(), 6 * v);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(std::memcmp(&got[size_t(i) * v], want[size_t(40 + i)].data(), v * sizeof(float)), 0) << i;
  EXPECT_EQ(std::memcmp(&got[5 * v], want[45].data(), v * sizeof(float)), 0);
}

// The prompt cache over rings (max_run 4): a prompt that goes on from a slot's end reuses it; one
// that forks further back than max_run is fed from its start (cached_tokens 0); both answers are
// those of a cache that keeps every position.
TEST(GptOssForward, PromptCacheReusesARingOnlyWhereItReachesBack) {
  const LoadedModel m = two_layer_model("gpt_oss_ring_cache");
  ThreadPool pool(2);
  NoSync sync;
  std::vector<int32_t> conversation(40);
  for (size_t i = 0; i < conversation.size(); ++i) conversation[i] = int32_t((i * 40503u + 3u) % 512u);
  GenerationOptions o;
  o.n_predict = 12;
  o.reuse_cache = true;
  o.batch_size = 4;
  auto answer = [&](TokenSource& source, const std::vector<int32_t>& prompt) {
    return generate(source, *m.tokenizer, prompt, o, {});
  };
  ModelForward ring(m.config, m.weights, m.shard, 128, pool, sync, GgmlType::F32, 1, kernels(), 4);
  LocalTokenSource source(ring);
  const GenerationResult first = answer(source, conversation);
  std::vector<int32_t> on(conversation);  // the first answer, then more
  on.insert(on.end(), first.generated.begin(), first.generated.end() - 1);
  on.insert(on.end(), {7, 8, 9});
  const std::vector<int32_t> fork(conversation.begin(), conversation.begin() + 30);  // 21 back
  for (const auto& [prompt, cached] : {std::pair{on, int(conversation.size() + first.generated.size() - 1)},
                                       std::pair{fork, 0}}) {
    const GenerationResult got = answer(source, prompt);
    ModelForward whole(m.config, m.weights, m.shard, 128, pool, sync);
    LocalTokenSource fresh(whole);
    EXPECT_EQ(got.cached_tokens, cached);
    EXPECT_EQ(got.generated, answer(fresh, prompt).generated);
  }
}

// The file again without some tensors or keys, for the refusals below.
std::string copy_without(const std::string& path, const std::string& tensor_part, const std::string& key,
                         const std::string& out) {
  const GgufFile in = GgufFile::open(path);
  GgufWriter w(uint32_t(in.alignment()));
  for (const auto& [k, v] : in.metadata())
    if (k != "general.alignment" && k != key) w.add(k, v);
  for (const GgufTensorInfo& t : in.tensors())
    if (tensor_part.empty() || t.name.find(tensor_part) == std::string::npos) w.add_tensor(t.name, t.ne, t.type);
  w.open(out);
  for (const GgufTensorInfo& t : in.tensors())
    if (tensor_part.empty() || t.name.find(tensor_part) == std::string::npos) w.write_data(in.tensor_data(t), t.n_bytes);
  w.close();
  return out;
}

TEST(GptOssFile, RefusesWhatItCannotRunNamingIt) {
  MakeOptions o;
  o.arch = "gpt-oss";
  o.progress = false;
  const std::string dir = scratch_dir("gpt_oss_refused");
  make_model(o, dir + "/m.gguf");
  auto config_error = [&](const std::string& file) {
    return error_of([&] { ModelConfig::from_gguf(GgufFile::open(file)); });
  };
  // A window without sinks: the sinks are required, named.
  std::string e = config_error(copy_without(dir + "/m.gguf", "attn_sinks", "", dir + "/no_sinks.gguf"));
  EXPECT_NE(e.find("missing tensor blk.0.attn_sinks.weight"), std::string::npos) << e;
  // No window key.
  e = config_error(copy_without(dir + "/m.gguf", "", "gpt-oss.attention.sliding_window", dir + "/no_window.gguf"));
  EXPECT_NE(e.find("gpt-oss.attention.sliding_window"), std::string::npos) << e;
  // YaRN without its factor.
  e = config_error(copy_without(dir + "/m.gguf", "", "gpt-oss.rope.scaling.factor", dir + "/no_factor.gguf"));
  EXPECT_NE(e.find("yarn rope scaling needs gpt-oss.rope.scaling.factor"), std::string::npos) << e;
  // The expert biases are part of the experts.
  e = config_error(copy_without(dir + "/m.gguf", "ffn_down_exps.bias", "", dir + "/no_bias.gguf"));
  EXPECT_NE(e.find("missing tensor blk.0.ffn_down_exps.bias"), std::string::npos) << e;
  // More ranks than expert blocks (16 experts of 3 blocks of 32): refused naming the counts.
  const ModelConfig c = ModelConfig::from_gguf(GgufFile::open(dir + "/m.gguf"));
  e = error_of([&] { expert_split(c, 0, 49); });
  EXPECT_NE(e.find("cannot split ffn_down_exps (16 experts of 96 units, blocks of 32) over 49 ranks"),
            std::string::npos) << e;
}

}  // namespace
}  // namespace r1pi
