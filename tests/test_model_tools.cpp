// r1pi-model's pieces: ModelConfig::from_gguf, the random model maker, the llama2.c importer and
// the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <numbers>
#include <set>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "layers/shard_sync.h"
#include "neon/kernels.h"
#include "model/architecture.h"
#include "model/model_config.h"
#include "model/model_loader.h"
#include "model/tensor_table.h"
#include "ggml/quantize.h"
#include "test_support.h"
#include "tokenizer/vocab.h"
#include "tools/model_maker.h"
#include "tools/model_presets.h"

namespace r1pi {
namespace {

using test::error_of;
using test::read_file;
using test::scratch_dir;

MakeOptions quiet(MakeOptions o = {}) {
  o.progress = false;
  return o;
}

// Mean and standard deviation of one dequantised row of a tensor.
std::pair<double, double> row_stats(const GgufFile& f, const std::string& name, uint64_t row) {
  const GgufTensorInfo* t = f.find_tensor(name);
  const uint64_t n = t->ne[0];
  std::vector<float> x(n);
  dequantize_row(t->type, f.tensor_data(*t) + row * ggml_row_bytes(t->type, n), x.data(), n);
  double sum = 0, sq = 0;
  for (float v : x) sum += v;
  const double mean = sum / n;
  for (float v : x) sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sq / n)};
}

// ---------------------------------------------------------------- make_model

TEST(MakeModel, TinyHasTheShapeTypesAndRopeFactors) {
  const std::string path = scratch_dir("make_tiny") + "/tiny.gguf";
  make_model(quiet(), path);
  const GgufFile f = GgufFile::open(path);
  const ModelConfig c = ModelConfig::from_gguf(f);
  EXPECT_EQ(test::sizes_of(c), (test::ConfigSizes{256, 4, 8, 4, 768, 512, 2048}));
  EXPECT_EQ(c.head_dim, 32u);
  EXPECT_EQ(c.rope_dim, 32u);
  EXPECT_FLOAT_EQ(c.rope_base, 10000.0f);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-5f);
  EXPECT_FALSE(c.tied_output);
  EXPECT_EQ(c.rope_freq_factors, llama3_rope_freq_factors(32, 10000.0f, 8.0f, 1.0f, 4.0f, 256));
  // All three llama3 bands occur at the tiny's size: kept (1), smoothed, divided (8).
  EXPECT_EQ(c.rope_freq_factors.front(), 1.0f);
  EXPECT_EQ(c.rope_freq_factors.back(), 8.0f);

  EXPECT_EQ(f.find_tensor("token_embd.weight")->type, GgmlType::Q4_0);
  EXPECT_EQ(f.find_tensor("blk.3.attn_q.weight")->type, GgmlType::Q4_0);
  EXPECT_EQ(f.find_tensor("blk.3.ffn_down.weight")->type, GgmlType::Q4_0);
  EXPECT_EQ(f.find_tensor("blk.3.attn_norm.weight")->type, GgmlType::F32);
  EXPECT_EQ(f.find_tensor("output_norm.weight")->type, GgmlType::F32);
  EXPECT_EQ(f.find_tensor("output.weight")->type, GgmlType::Q6_K);
  EXPECT_EQ(f.find_tensor("rope_freqs.weight")->type, GgmlType::F32);
  EXPECT_EQ(f.tensors().size(), 1u + 1u + 4u * 9u + 2u);

  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_u32("general.file_type"), 2u);
  EXPECT_EQ(f.get_u32("general.quantization_version"), 2u);
  EXPECT_EQ(f.get_u32("llama.vocab_size"), 512u);
  for (const auto& [key, value] : f.metadata()) {
    EXPECT_EQ(key.find("rope.scaling"), std::string::npos) << key << " would be misapplied by llama.cpp";
  }
  const Vocab v = Vocab::from_gguf(f);
  EXPECT_EQ(v.tokens.size(), 512u);
  EXPECT_EQ(v.model, "gpt2");

  // Scales as documented: unit embeddings, 1/sqrt(fan-in) projections, norms near 1.
  EXPECT_NEAR(row_stats(f, "token_embd.weight", 7).second, 1.0, 0.15);
  EXPECT_NEAR(row_stats(f, "blk.0.attn_q.weight", 3).second, 1.0 / 16, 0.01);
  const auto [norm_mean, norm_std] = row_stats(f, "blk.1.ffn_norm.weight", 0);
  EXPECT_NEAR(norm_mean, 1.0, 0.02);
  EXPECT_LT(norm_std, 0.1);
}

// llama-quantize's mixes: output.weight Q6_K, the base type everywhere but in attn_v and ffn_down
// in the layers each mix picks.
TEST(MakeModel, KQuantMixesFollowLlamaQuantize) {
  // attn_v / ffn_down / attn_output per layer of 16, written out from llama-quant.cpp's rules (gqa:
  // the tiny preset's 8 heads over 4 KV heads is 2; over 2 KV heads 4).
  using T = GgmlType;
  using PerLayer = std::function<T(uint32_t)>;
  auto all = [](T t) { return PerLayer([t](uint32_t) { return t; }); };
  auto below = [](uint32_t n, T lo, T hi) { return PerLayer([=](uint32_t l) { return l < n ? lo : hi; }); };
  const std::vector<uint32_t> more_bits = {0, 1, 4, 7, 10, 13, 14, 15};  // use_more_bits(i, 16)
  auto more = [&](T base) {
    return PerLayer([=](uint32_t l) { return std::count(more_bits.begin(), more_bits.end(), l) ? T::Q6_K : base; });
  };
  struct Want {
    const char* name;
    uint32_t kv_heads;
    T base;
    PerLayer attn_v, ffn_down, attn_output;
  };
  const std::vector<Want> wants = {
      {"q2_k", 4, T::Q2_K, all(T::Q3_K), all(T::Q3_K), all(T::Q3_K)},
      {"q2_k", 2, T::Q2_K, all(T::Q4_K), all(T::Q3_K), all(T::Q3_K)},
      {"q3_k_s", 4, T::Q3_K, all(T::Q3_K), all(T::Q3_K), all(T::Q3_K)},
      {"q3_k_m", 4, T::Q3_K, below(2, T::Q5_K, T::Q4_K), below(1, T::Q5_K, T::Q4_K), all(T::Q4_K)},
      {"q3_k_l", 4, T::Q3_K, all(T::Q5_K), all(T::Q5_K), all(T::Q5_K)},
      {"q4_k_s", 4, T::Q4_K, below(4, T::Q5_K, T::Q4_K), below(2, T::Q5_K, T::Q4_K), all(T::Q4_K)},
      {"q4_k_m", 4, T::Q4_K, more(T::Q4_K), more(T::Q4_K), all(T::Q4_K)},
      {"Q5_K_S", 4, T::Q5_K, all(T::Q5_K), all(T::Q5_K), all(T::Q5_K)},
      {"Q5_K_M", 4, T::Q5_K, more(T::Q5_K), more(T::Q5_K), all(T::Q5_K)},
      {"iq4_xs", 4, T::IQ4_XS, all(T::IQ4_XS), below(2, T::Q5_K, T::IQ4_XS), all(T::IQ4_XS)},
      {"iq4_xs", 2, T::IQ4_XS, all(T::Q5_K), below(2, T::Q5_K, T::IQ4_XS), all(T::IQ4_XS)},
      {"iq4_nl", 2, T::IQ4_NL, all(T::Q5_K), below(2, T::Q5_K, T::IQ4_NL), all(T::IQ4_NL)},
  };
  // The rules, through the function both writers ask (a made file per mix would cost minutes
  // under qemu).
  for (const Want& w : wants) {
    SCOPED_TRACE(std::string(w.name) + " kv " + std::to_string(w.kv_heads));
    const QuantMix* mix = quant_mix_named(w.name);
    ASSERT_NE(mix, nullptr);
    const uint32_t gqa = 8 / w.kv_heads;
    auto type = [&](const std::string& name, uint32_t layer, bool output = false) {
      return mix_tensor_type(*mix, name, layer, 16, output, gqa);
    };
    EXPECT_EQ(type("output.weight", 0, true), T::Q6_K);
    EXPECT_EQ(type("token_embd.weight", 0), w.base);
    for (uint32_t layer = 0; layer < 16; ++layer) {
      const std::string blk = "blk." + std::to_string(layer) + ".";
      EXPECT_EQ(type(blk + "attn_v.weight", layer), w.attn_v(layer)) << blk;
      EXPECT_EQ(type(blk + "ffn_down.weight", layer), w.ffn_down(layer)) << blk;
      EXPECT_EQ(type(blk + "attn_output.weight", layer), w.attn_output(layer)) << blk;
      for (const char* t : {"attn_q", "attn_k", "ffn_gate", "ffn_up"})
        EXPECT_EQ(type(blk + t + ".weight", layer), w.base) << blk << t;
    }
  }
  // A made file follows them (the maker passes the model's layers and heads).
  MakeOptions o = quiet();
  o.n_layers = 8;
  o.n_kv_heads = 2;
  o.mix = quant_mix_named("q3_k_m");
  const std::string path = scratch_dir("make_mix") + "/q3_k_m.gguf";
  make_model(o, path);
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.get_u32("general.file_type"), 12u);
  EXPECT_EQ(f.find_tensor("output.weight")->type, T::Q6_K);
  for (uint32_t layer = 0; layer < 8; ++layer) {
    const std::string blk = "blk." + std::to_string(layer) + ".";
    EXPECT_EQ(f.find_tensor(blk + "attn_v.weight")->type, layer < 2 ? T::Q5_K : T::Q4_K) << blk;
    EXPECT_EQ(f.find_tensor(blk + "ffn_down.weight")->type, T::Q4_K) << blk;  // 8 / 16 = 0 layers of Q5_K
    EXPECT_EQ(f.find_tensor(blk + "attn_output.weight")->type, T::Q4_K) << blk;
    EXPECT_EQ(f.find_tensor(blk + "ffn_up.weight")->type, T::Q3_K) << blk;
  }
  EXPECT_EQ(quant_mix_named("q4_k_x"), nullptr);
  // The file types llama.cpp gives them (LLAMA_FTYPE_MOSTLY_*).
  const std::vector<std::pair<const char*, uint32_t>> file_types = {
      {"q2_k", 10}, {"q3_k_s", 11}, {"q3_k_m", 12}, {"q3_k_l", 13}, {"q4_k_s", 14},
      {"q4_k_m", 15}, {"q5_k_s", 16}, {"q5_k_m", 17}, {"iq4_nl", 25}, {"iq4_xs", 30}, {"mxfp4_moe", 38}};
  for (const auto& [name, file_type] : file_types) EXPECT_EQ(quant_mix_named(name)->file_type, file_type) << name;
}

// Every architecture of the registry, through its "tiny" preset: the maker writes its rows, the
// loader reads each back as it was made, every tensor of its table is there, and a forward pass
// gives finite logits, the same in one batch as token by token and on every backend as on the
// scalar reference. A new architecture is tested here by being registered.
TEST(MakeModel, EveryArchitectureRoundTripsAndRuns) {
  for (const Architecture* arch : architectures()) {
    SCOPED_TRACE(std::string(arch->name));
    MakeOptions o = quiet();
    o.arch = std::string(arch->name);
    o.n_layers = 2;
    const ModelConfig made = resolve_shape(o, 0);
    const std::string path = test::make_model_file("arch_" + o.arch, o);
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.get_string("general.architecture"), arch->name);
    const ModelConfig c = ModelConfig::from_gguf(f);
    EXPECT_EQ(c.arch, arch);
    for (const HyperParam& p : arch->params) {
      if (auto* u = std::get_if<uint32_t ModelConfig::*>(&p.field)) {
        EXPECT_EQ(c.**u, made.**u) << p.key;
      } else {
        auto* f32 = std::get_if<float ModelConfig::*>(&p.field);
        EXPECT_EQ(c.**f32, made.**f32) << p.key;
      }
    }
    for (const TensorInstance& t : model_tensors(c)) {
      if (t.spec->presence == Presence::Required) {
        EXPECT_NE(f.find_tensor(t.name), nullptr) << t.name;
      }
    }

    const LoadedModel m = load_model(path);
    ThreadPool pool(2);
    const std::vector<int32_t> tokens = {1, 70, 300, 5, 511, 42};
    const std::vector<float> batched = test::chunked_logits(m, tokens, int(tokens.size()), pool);
    const std::vector<float> one_by_one = test::chunked_logits(m, tokens, 1, pool);
    ASSERT_EQ(batched.size(), tokens.size() * c.n_vocab);
    for (float v : batched) ASSERT_TRUE(std::isfinite(v));
    EXPECT_EQ(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)), 0);
    for (const Kernels* k : available_backends()) {
      NoSync sync;
      ModelForward f(m.config, m.weights, m.shard, int(tokens.size()), pool, sync, GgmlType::F32, 1, *k);
      const std::vector<float>& got = f.forward(Batch::run(tokens.data(), int(tokens.size()), 0, LogitsFor::All));
      ASSERT_EQ(got.size(), batched.size()) << k->name;
      EXPECT_EQ(std::memcmp(got.data(), batched.data(), got.size() * sizeof(float)), 0) << k->name;
    }
  }
}

// A head size other than dim / heads (qwen3's 64 in the tiny preset, 128 in the real ones) is written
// as llama.cpp's converter writes it: key_length and value_length both, or llama.cpp refuses the
// file (it sizes attn_k and attn_v by value_length).
TEST(MakeModel, Qwen3WritesKeyAndValueLength) {
  MakeOptions o = quiet();
  o.arch = "qwen3";
  o.n_layers = 1;
  const GgufFile f = GgufFile::open(test::make_model_file("qwen3_head_size", o));
  EXPECT_EQ(f.get_u32("qwen3.attention.key_length"), 64u);
  EXPECT_EQ(f.get_u32("qwen3.attention.value_length"), 64u);
  EXPECT_EQ(f.get_u32("qwen3.embedding_length") / f.get_u32("qwen3.attention.head_count"), 32u);
}

TEST(MakeModel, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string dir = scratch_dir("make_seed");
  MakeOptions o = quiet();
  o.n_layers = 1;
  make_model(o, dir + "/a.gguf");
  make_model(o, dir + "/b.gguf");
  o.seed = 2;
  make_model(o, dir + "/c.gguf");
  const std::string a = read_file(dir + "/a.gguf");
  EXPECT_EQ(a, read_file(dir + "/b.gguf"));
  const std::string c = read_file(dir + "/c.gguf");
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(MakeModel, ShapeFlagsOverrideThePreset) {
  const std::string path = scratch_dir("make_flags") + "/m.gguf";
  MakeOptions o = quiet();
  o.dim = 128;
  o.n_layers = 2;
  o.n_heads = 4;
  o.n_kv_heads = 2;
  o.ffn_dim = 320;
  o.n_vocab = 300;
  o.n_ctx = 512;
  o.output_type = GgmlType::Q4_0;  // Q6_K needs dim a multiple of 256
  make_model(o, path);
  const GgufFile f = GgufFile::open(path);
  const ModelConfig c = ModelConfig::from_gguf(f);
  EXPECT_EQ(test::sizes_of(c), (test::ConfigSizes{128, 2, 4, 2, 320, 300, 512}));
  EXPECT_EQ(c.kv_dim(), 64u);
  EXPECT_EQ(f.find_tensor("output.weight")->type, GgmlType::Q4_0);
  EXPECT_EQ(c.rope_freq_factors.size(), 16u);
}

TEST(MakeModel, TiedOutputHasNoOutputWeight) {
  const std::string path = scratch_dir("make_tied") + "/m.gguf";
  MakeOptions o = quiet();
  o.tied_output = true;
  o.n_layers = 1;
  make_model(o, path);
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
  EXPECT_TRUE(ModelConfig::from_gguf(f).tied_output);
}

TEST(MakeModel, RefusesShapesTheRuntimeCannotLoad) {
  const std::string path = scratch_dir("make_bad") + "/m.gguf";
  auto make_with = [&](std::function<void(MakeOptions&)> change) {
    MakeOptions o = quiet();
    change(o);
    return error_of([&] { make_model(o, path); });
  };
  EXPECT_NE(make_with([](MakeOptions& o) { o.preset = "405B"; }).find("unknown preset '405B'"), std::string::npos);
  EXPECT_NE(make_with([](MakeOptions& o) { o.dim = 100; }).find("not divisible"), std::string::npos);
  EXPECT_NE(make_with([](MakeOptions& o) { o.dim = 264; o.n_heads = 4; o.n_kv_heads = 4; })
                .find("multiple of 32"), std::string::npos);
  EXPECT_NE(make_with([](MakeOptions& o) { o.n_kv_heads = 3; }).find("KV heads"), std::string::npos);
  EXPECT_NE(make_with([](MakeOptions& o) { o.n_vocab = 100; }).find("at least 258"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
  // Rows of 128 hold no Q6_K super-block: output.weight falls back to Q8_0, as llama-quantize's.
  MakeOptions narrow = quiet();
  narrow.dim = 128;
  make_model(narrow, path);
  EXPECT_EQ(GgufFile::open(path).find_tensor("output.weight")->type, GgmlType::Q8_0);
}

TEST(MakeModel, HfTokenizerIsPaddedWithReservedTokens) {
  const std::string dir = scratch_dir("make_tokenizer");
  MakeOptions o = quiet();
  o.tokenizer_json = test::shared_data("llama3-tokenizer.json");
  o.deepseek_specials = true;
  o.dim = 64;
  o.n_heads = 2;
  o.n_kv_heads = 1;
  o.ffn_dim = 64;
  o.n_layers = 1;
  o.tied_output = true;
  o.n_vocab = 128260;
  make_model(o, dir + "/m.gguf");
  const GgufFile f = GgufFile::open(dir + "/m.gguf");
  EXPECT_EQ(ModelConfig::from_gguf(f).n_vocab, 128260u);
  const Vocab v = Vocab::from_gguf(f);
  ASSERT_EQ(v.tokens.size(), 128260u);
  EXPECT_EQ(v.tokens[128000], "<｜begin▁of▁sentence｜>");
  EXPECT_EQ(v.bos_id, 128000);
  EXPECT_EQ(v.types[128259], TokenType::CONTROL);
  EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), v.tokens.size());
  EXPECT_FALSE(v.merges.empty());

  o.n_vocab = 1000;
  EXPECT_NE(error_of([&] { make_model(o, dir + "/small.gguf"); }).find("smaller than the 128256 tokens"),
            std::string::npos);
}

// ---------------------------------------------------------------- import_llama2c

// stories260K: dim 64, hidden 172, 5 layers, 8/4 heads, vocab 512 (shared classifier), seq 512.
constexpr uint64_t kDim = 64, kHidden = 172, kLayers = 5, kKv = 32, kVocab = 512;

TEST(ImportLlama2c, Stories260KCopiesEveryFloat) {
  const std::string ckpt = test::shared_data("stories260K.bin");
  const std::string path = scratch_dir("import") + "/stories.gguf";
  import_llama2c(ckpt, path);
  const GgufFile f = GgufFile::open(path);
  const ModelConfig c = ModelConfig::from_gguf(f);
  EXPECT_EQ(test::sizes_of(c), (test::ConfigSizes{64, 5, 8, 4, 172, 512, 512}));
  EXPECT_FLOAT_EQ(c.rope_base, 10000.0f);
  EXPECT_TRUE(c.tied_output);
  EXPECT_TRUE(c.rope_freq_factors.empty());
  EXPECT_EQ(f.get_u32("general.file_type"), 0u);

  // Offsets (in floats, after the 28-byte header) of three tensors in llama2.c's layout.
  const std::string bytes = read_file(ckpt);
  auto floats_at = [&](uint64_t offset) { return bytes.data() + 28 + 4 * offset; };
  const uint64_t embd = 0;
  const uint64_t w3_last = kVocab * kDim + kLayers * kDim + kLayers * (2 * kDim * kDim + 2 * kKv * kDim) +
                           kLayers * kDim + kLayers * kHidden * kDim * 2 + (kLayers - 1) * kHidden * kDim;
  const uint64_t final_norm = w3_last + kHidden * kDim;
  auto same = [&](const char* name, uint64_t offset) {
    const GgufTensorInfo* t = f.find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, GgmlType::F32);
    EXPECT_EQ(std::memcmp(f.tensor_data(*t), floats_at(offset), t->n_bytes), 0) << name;
  };
  same("token_embd.weight", embd);
  same("blk.4.ffn_up.weight", w3_last);
  same("output_norm.weight", final_norm);
  float first;
  std::memcpy(&first, f.tensor_data(*f.find_tensor("token_embd.weight")), 4);
  float expected;
  std::memcpy(&expected, floats_at(0), 4);
  EXPECT_EQ(first, expected);

  const Vocab v = Vocab::from_gguf(f);
  EXPECT_EQ(v.model, "llama");
  ASSERT_EQ(v.tokens.size(), 512u);
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.types[3], TokenType::BYTE);
  EXPECT_EQ(v.tokens[300], "<piece_300>");
}

TEST(ImportLlama2c, ReadsTokenizerBin) {
  const std::string dir = scratch_dir("import_tokenizer");
  {
    std::ofstream out(dir + "/tok.bin", std::ios::binary);
    const int32_t max_len = 8;
    out.write(reinterpret_cast<const char*>(&max_len), 4);
    for (int32_t id = 0; id < 512; ++id) {
      std::string text = id == 1 ? "\n<s>\n" : id < 3 ? "x" : id == 10 ? "<0x07>" : " w" + std::to_string(id);
      const float score = -static_cast<float>(id);
      const int32_t len = static_cast<int32_t>(text.size());
      out.write(reinterpret_cast<const char*>(&score), 4);
      out.write(reinterpret_cast<const char*>(&len), 4);
      out.write(text.data(), len);
    }
  }
  import_llama2c(test::shared_data("stories260K.bin"), dir + "/m.gguf", dir + "/tok.bin");
  const Vocab v = Vocab::from_gguf(GgufFile::open(dir + "/m.gguf"));
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.types[10], TokenType::BYTE);
  EXPECT_EQ(v.tokens[20], "\xE2\x96\x81w20");
  EXPECT_FLOAT_EQ(v.scores[20], -20.0f);

  std::filesystem::resize_file(dir + "/tok.bin", 1000);
  EXPECT_NE(error_of([&] { import_llama2c(test::shared_data("stories260K.bin"), dir + "/n.gguf", dir + "/tok.bin"); })
                .find("tok.bin"), std::string::npos);
}

TEST(ImportLlama2c, RejectsTruncatedAndForeignFiles) {
  const std::string dir = scratch_dir("import_bad");
  const std::string bytes = read_file(test::shared_data("stories260K.bin"));
  std::ofstream(dir + "/short.bin", std::ios::binary).write(bytes.data(), 100000);
  const std::string truncated = error_of([&] { import_llama2c(dir + "/short.bin", dir + "/a.gguf"); });
  EXPECT_NE(truncated.find("short.bin"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.gguf"));

  std::ofstream(dir + "/text.bin") << "this is not a llama2.c checkpoint, just some text";
  EXPECT_NE(error_of([&] { import_llama2c(dir + "/text.bin", dir + "/b.gguf"); }).find("not that of a llama2.c"),
            std::string::npos);
  EXPECT_NE(error_of([&] { import_llama2c(dir + "/missing.bin", dir + "/c.gguf"); }).find("missing.bin"),
            std::string::npos);
}

// ---------------------------------------------------------------- ModelConfig

// A minimal F32 llama file (dim 64, 1 layer, 2/1 heads, FFN 32, vocab 8), with edits.
struct TinyFile {
  std::string arch = "llama";
  uint32_t heads = 2;
  uint32_t block_count = 1;  // the metadata only: the tensors are always one layer's
  std::string skip_tensor;
  std::string reshape_tensor;  // gets one extra row
  bool llama3_keys = false;
  float rope_factor = 8, high_freq_factor = 4;
  uint64_t vocab_size_key = 0;  // written as a u64 llama.vocab_size when set
  std::vector<float> rope_freqs;
  uint32_t experts = 0;  // llama.expert_count, written when not 0
  uint32_t value_length = 0;  // llama.attention.value_length, written when not 0

  // The tensors are the architecture table's (rope_freqs only when given), zero-filled.
  std::string write(const std::string& path) const {
    const uint64_t dim = 64, ffn = 32, vocab = 8;
    const ModelConfig c = test::llama_shape(uint32_t(dim), 1, heads, 1, uint32_t(ffn), uint32_t(vocab));
    GgufWriter w;
    w.add("general.architecture", GgufValue::string(arch));
    w.add("llama.context_length", GgufValue::u32(128));
    w.add("llama.embedding_length", GgufValue::u32(dim));
    w.add("llama.block_count", GgufValue::u32(block_count));
    w.add("llama.feed_forward_length", GgufValue::u32(ffn));
    w.add("llama.attention.head_count", GgufValue::u32(heads));
    w.add("llama.attention.head_count_kv", GgufValue::u32(1));
    w.add("llama.vocab_size", vocab_size_key ? GgufValue::u64(vocab_size_key) : GgufValue::u32(vocab));
    if (experts) w.add("llama.expert_count", GgufValue::u32(experts));
    if (value_length) w.add("llama.attention.value_length", GgufValue::u32(value_length));
    if (llama3_keys) {
      w.add("llama.rope.scaling.type", GgufValue::string("llama3"));
      w.add("llama.rope.scaling.factor", GgufValue::f32(rope_factor));
      w.add("llama.rope.scaling.low_freq_factor", GgufValue::f32(1));
      w.add("llama.rope.scaling.high_freq_factor", GgufValue::f32(high_freq_factor));
      w.add("llama.rope.scaling.original_context_length", GgufValue::u32(64));
    }
    std::vector<std::vector<float>> data;  // per declared tensor
    for (const TensorInstance& t : model_tensors(c)) {
      const bool rope = t.name == "rope_freqs.weight";
      if (t.name == skip_tensor || (rope && rope_freqs.empty()) ||
          t.spec->presence == Presence::ElseTokenEmbd)
        continue;
      std::vector<uint64_t> ne = rope ? std::vector<uint64_t>{rope_freqs.size()} : t.spec->shape(c);
      if (t.name == reshape_tensor) ne.back() += 1;
      w.add_tensor(t.name, ne, GgmlType::F32);
      uint64_t n = 1;
      for (uint64_t d : ne) n *= d;
      data.push_back(rope ? rope_freqs : std::vector<float>(n));
    }
    w.open(path);
    for (const std::vector<float>& d : data) w.write_data(d.data(), d.size() * sizeof(float));
    w.close();
    return path;
  }
};

std::string config_error(const TinyFile& spec, const std::string& name) {
  const std::string path = spec.write(scratch_dir("config_" + name) + "/m.gguf");
  return error_of([&] { ModelConfig::from_gguf(GgufFile::open(path)); });
}

TEST(ModelConfig, ReadsAMinimalFile) {
  const GgufFile f = GgufFile::open(TinyFile{}.write(scratch_dir("config_ok") + "/m.gguf"));
  const ModelConfig c = ModelConfig::from_gguf(f);
  EXPECT_EQ(c.head_dim, 32u);
  EXPECT_EQ(c.rope_dim, 32u);  // defaults to the head size
  EXPECT_EQ(c.kv_dim(), 32u);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_base, 10000.0f);
  EXPECT_TRUE(c.tied_output);
  EXPECT_TRUE(c.rope_freq_factors.empty());
}

TEST(ModelConfig, RopeFactorsFromMetadataOrTensor) {
  TinyFile keys;
  keys.llama3_keys = true;
  const GgufFile a = GgufFile::open(keys.write(scratch_dir("config_keys") + "/m.gguf"));
  EXPECT_EQ(ModelConfig::from_gguf(a).rope_freq_factors,
            llama3_rope_freq_factors(32, 10000.0f, 8.0f, 1.0f, 4.0f, 64));

  TinyFile tensor;
  for (int i = 0; i < 16; ++i) tensor.rope_freqs.push_back(1.0f + i);
  const GgufFile b = GgufFile::open(tensor.write(scratch_dir("config_tensor") + "/m.gguf"));
  EXPECT_EQ(ModelConfig::from_gguf(b).rope_freq_factors, tensor.rope_freqs);

  tensor.rope_freqs.pop_back();
  EXPECT_NE(config_error(tensor, "tensor_shape").find("rope_freqs.weight has shape [15]"), std::string::npos);
}

TEST(ModelConfig, ErrorsNameTheFileAndTheProblem) {
  TinyFile arch;
  arch.arch = "gpt2";
  const std::string e1 = config_error(arch, "arch");
  EXPECT_NE(e1.find("unknown architecture 'gpt2' (r1pi runs llama, qwen2, qwen3, qwen3moe, gpt-oss)"), std::string::npos) << e1;
  EXPECT_NE(e1.find("config_arch/m.gguf"), std::string::npos) << e1;

  TinyFile missing;
  missing.skip_tensor = "blk.0.ffn_up.weight";
  EXPECT_NE(config_error(missing, "missing").find("missing tensor blk.0.ffn_up.weight"), std::string::npos);

  TinyFile shape;
  shape.reshape_tensor = "blk.0.attn_k.weight";
  EXPECT_NE(config_error(shape, "shape").find("blk.0.attn_k.weight has shape [64, 33], expected [64, 32]"),
            std::string::npos);

  TinyFile heads;
  heads.heads = 3;
  EXPECT_NE(config_error(heads, "heads").find("not divisible by 3 heads"), std::string::npos);

  TinyFile moe;
  moe.experts = 8;
  EXPECT_NE(config_error(moe, "moe").find("mixture-of-experts model (llama.expert_count = 8)"),
            std::string::npos);

  // Values of another size than the keys: llama.cpp sizes attn_k/attn_v by it, r1pi does not run it.
  TinyFile value;
  value.value_length = 16;
  EXPECT_NE(config_error(value, "value").find("value head size 16 (attention.value_length) differs from the "
                                              "key head size 32 (attention.key_length)"),
            std::string::npos);

  // Used to be cut to 8 (matching the 8-row tensors) and run.
  TinyFile vocab;
  vocab.vocab_size_key = (uint64_t(1) << 32) + 8;
  EXPECT_NE(config_error(vocab, "vocab").find("llama.vocab_size 4294967304 is more tokens"),
            std::string::npos);

  // Infinite factors used to pass the range checks (inf > 0).
  TinyFile factor;
  factor.llama3_keys = true;
  factor.rope_factor = INFINITY;
  EXPECT_NE(config_error(factor, "factor").find("bad llama3 rope scaling (factor inf"), std::string::npos);
  TinyFile high;
  high.llama3_keys = true;
  high.high_freq_factor = INFINITY;
  EXPECT_NE(config_error(high, "high").find("need finite factors"), std::string::npos);
}

// A token list shorter than the output rows used to load and fail mid-generation, after text had
// streamed, on the first missing id ("token id 321 is out of range", no file named).
TEST(ModelLoader, RefusesFewerTokensThanOutputRows) {
  const std::string dir = scratch_dir("loader_short_vocab");
  MakeOptions o = quiet();
  o.n_vocab = 600;
  make_model(o, dir + "/full.gguf");
  const GgufFile full = GgufFile::open(dir + "/full.gguf");
  GgufWriter w;
  for (const auto& [key, value] : full.metadata()) {
    GgufValue v = value;
    if (key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.token_type") v.array.resize(512);
    if (key != "general.alignment") w.add(key, v);
  }
  for (const GgufTensorInfo& t : full.tensors()) w.add_tensor(t.name, t.ne, t.type);
  w.open(dir + "/short.gguf");
  for (const GgufTensorInfo& t : full.tensors()) w.write_data(full.tensor_data(t), t.n_bytes);
  w.close();
  EXPECT_NO_THROW(load_model(dir + "/full.gguf"));
  const std::string e = error_of([&] { load_model(dir + "/short.gguf"); });
  EXPECT_NE(e.find("short.gguf: the vocabulary has 512 tokens but the model 600 output rows"),
            std::string::npos) << e;
}

// fuzz_gguf's finding: a huge block count used to build the tensor list of every claimed layer
// (minutes, gigabytes) before any tensor was looked up.
TEST(ModelConfig, RefusesMoreLayersThanTheFileHasTensors) {
  TinyFile layers;
  layers.block_count = 4000000000u;
  EXPECT_NE(config_error(layers, "layers").find("llama.block_count is 4000000000, but the file has only 11 tensors"),
            std::string::npos)
      << config_error(layers, "layers");
  layers.block_count = 2;  // plausible, but blk.1 is missing
  EXPECT_NE(config_error(layers, "layers2").find("missing tensor blk.1.attn_norm.weight"), std::string::npos);
}

TEST(ModelConfig, Llama3FactorsMatchLlama31) {
  // Llama 3.1 8B: 64 pairs, base 500000, factor 8, low 1, high 4, original context 8192.
  const std::vector<float> f = llama3_rope_freq_factors(128, 500000.0f, 8.0f, 1.0f, 4.0f, 8192);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[63], 8.0f);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]);
  // Pair 31: wavelength 2*pi*500000^(62/128) ~ 3620, inside the smoothed band [2048, 8192].
  const double wavelen = 2 * std::numbers::pi * std::pow(500000.0, 62.0 / 128);
  const double smooth = (8192 / wavelen - 1) / 3;
  EXPECT_FLOAT_EQ(f[31], static_cast<float>(1 / ((1 - smooth) / 8 + smooth)));
  EXPECT_GT(f[31], 1.0f);
  EXPECT_LT(f[31], 8.0f);
}

// ---------------------------------------------------------------- the CLI

TEST(ModelCli, MakeInfoAndErrors) {
  const std::string tool = test::bin_dir() + "/r1pi-model";
  const std::string dir = scratch_dir("cli");
  auto made = test::run_command(tool + " make --preset tiny --layers 1 --seed 3 -o " + dir + "/m.gguf");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_EQ(made.output.find('\r'), std::string::npos) << "no progress when stderr is not a terminal";

  auto info = test::run_command(tool + " info " + dir + "/m.gguf");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  for (const char* s : {"general.architecture", "token_embd.weight", "Q4_0", "Q6_K", "rope_freqs.weight",
                        "dim 256, 1 layers", "llama3 frequency factors", "items)"}) {
    EXPECT_NE(info.output.find(s), std::string::npos) << s << "\n" << info.output;
  }
  auto all = test::run_command(tool + " info --all " + dir + "/m.gguf");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_GT(all.output.size(), info.output.size());

  auto missing = test::run_command(tool + " info " + dir + "/nothing.gguf");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("error: "), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find(dir + "/nothing.gguf"), std::string::npos) << missing.output;

  // Bounded: a FIFO used to block open(2) until a writer came.
  const std::string fifo = dir + "/fifo.gguf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto fifo_info = test::run_command("timeout -s KILL 60 " + tool + " info " + fifo);
  EXPECT_EQ(fifo_info.exit_code, 1) << fifo_info.output;
  EXPECT_NE(fifo_info.output.find("error: " + fifo + ": not a regular file"), std::string::npos)
      << fifo_info.output;

  auto import = test::run_command(tool + " import-llama2c " + dir + "/none.bin -o " + dir + "/x.gguf");
  EXPECT_EQ(import.exit_code, 1);
  EXPECT_NE(import.output.find(dir + "/none.bin"), std::string::npos) << import.output;

  auto preset = test::run_command(tool + " make --preset 3B -o " + dir + "/y.gguf");
  EXPECT_EQ(preset.exit_code, 1);
  EXPECT_NE(preset.output.find("unknown preset '3B'"), std::string::npos) << preset.output;

  EXPECT_NE(test::run_command(tool + " make --preset tiny").exit_code, 0);  // no -o
  EXPECT_NE(test::run_command(tool + " make -o x --output-type q8_k").exit_code, 0);
  EXPECT_NE(test::run_command(tool).exit_code, 0);  // no subcommand
}

// A disk that fills up while the model is written: a clear error, status 1, and no partial model
// left where a later run would find it.
// --type and --output-type take every type the trait rows let hold a matrix, and nothing else.
TEST(ModelCli, MakeTypesComeFromTheTraits) {
  const std::string tool = test::bin_dir() + "/r1pi-model";
  const std::string dir = scratch_dir("cli_types");
  for (const std::string& name : ggml_matrix_type_names()) {
    SCOPED_TRACE(name);
    if (quant_mix_named(name)) continue;  // q2_k, iq4_nl, iq4_xs: llama-quantize's mixes of that name
    const std::string path = dir + "/" + name + ".gguf";
    const auto made = test::run_command(tool + " make --no-progress --layers 1 --type " + name +
                                        " --output-type " + name + " -o " + path);
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight")->type, *ggml_matrix_type_named(name));
    EXPECT_EQ(f.find_tensor("output.weight")->type, *ggml_matrix_type_named(name));
    EXPECT_EQ(f.get_u32("general.file_type"), ggml_traits(*ggml_matrix_type_named(name)).file_type);
  }
  const auto refused = test::run_command(tool + " make --type iq2_xxs -o " + dir + "/no.gguf");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("iq2_xxs"), std::string::npos) << refused.output;
}

TEST(ModelCli, FullDiskIsAnErrorAndLeavesNoFile) {
  const std::string tool = test::bin_dir() + "/r1pi-model";
  const std::string dir = scratch_dir("full-disk");
  // /dev/full: every write fails with ENOSPC (a device: nothing to remove afterwards).
  auto full = test::run_command(tool + " make --preset tiny --no-progress -o /dev/full");
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_NE(full.output.find("error: /dev/full: write failed: No space left on device"), std::string::npos)
      << full.output;
  // A file-size limit of 1000 KB stops the tiny model (about 2 MB) half way, as a full disk
  // would (SIGXFSZ ignored, so write(2) fails with EFBIG instead of killing the process).
  const std::string out = dir + "/half.gguf";
  auto limited = test::run_command("sh -c \"trap '' XFSZ; ulimit -f 1000; exec " + tool +
                                   " make --preset tiny --no-progress -o " + out + "\"");
  EXPECT_EQ(limited.exit_code, 1) << limited.output;
  EXPECT_NE(limited.output.find("error: " + out + ": write failed: File too large"), std::string::npos)
      << limited.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "the incomplete file was left behind";
}

}  // namespace
}  // namespace r1pi
