// Tensor parallelism without MPI: the shard each rank of n computes from the configuration, the
// slices the tensor table gives it, and the weights those slices fill. Every rank count the
// runtime accepts must split each tensor into disjoint parts that cover it exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "model/model_loader.h"
#include "model/shard.h"
#include "model/tensor_table.h"
#include "model/weight_slices.h"
#include "test_support.h"
#include "tools/model_maker.h"
#include "tools/model_presets.h"

namespace r1pi {
namespace {

using test::error_of;

// DeepSeek-R1-Distill-Llama-8B's shape, Q4_0 ffn_down.
ModelConfig flagship() {
  MakeOptions o;
  o.preset = "8B";
  ModelConfig c = resolve_shape(o, 0);
  c.ffn_block = 32;
  return c;
}

TEST(Shard, RanksTileEveryRangeEvenly) {
  const ModelConfig c = flagship();
  for (int n = 1; n <= int(c.n_kv_heads); ++n) {
    std::vector<Shard> shards;
    for (int r = 0; r < n; ++r) shards.push_back(Shard::for_rank(c, r, n));
    auto check = [&](Range Shard::*range, uint32_t total, uint32_t unit, const char* what) {
      uint32_t next = 0, smallest = total, largest = 0;
      for (const Shard& s : shards) {
        const Range part = s.*range;
        EXPECT_EQ(part.begin, next) << what << " n=" << n;  // contiguous, in rank order
        EXPECT_EQ(part.size() % unit, 0u) << what << " n=" << n;
        smallest = std::min(smallest, part.size());
        largest = std::max(largest, part.size());
        next = part.end;
      }
      EXPECT_EQ(next, total) << what << " n=" << n;
      EXPECT_LE(largest - smallest, unit) << what << " n=" << n;  // balanced to one unit
    };
    check(&Shard::kv_heads, c.n_kv_heads, 1, "kv heads");
    check(&Shard::ffn, c.ffn_dim, c.ffn_block, "ffn");
    check(&Shard::vocab, c.n_vocab, 1, "vocab");
  }
}

// --shard-weights: contiguous parts covering the count, none empty, each within one unit of its
// share where every share is a unit or more; equal weights are the even split.
TEST(Shard, WeightedPartsAreWithinOneUnitOfTheirShare) {
  for (const ShardWeights& w : {ShardWeights{2, 1, 1}, ShardWeights{1, 1, 1, 2}, ShardWeights{31.2, 15.6},
                                ShardWeights{5, 3, 2, 7, 1, 1, 4, 9}})
    for (uint32_t count : {8u, 17u, 448u, 128256u}) {
      double total = 0;
      for (double x : w) total += x;
      uint32_t next = 0;
      const double least = count * *std::min_element(w.begin(), w.end()) / total;
      for (int i = 0; i < int(w.size()); ++i) {
        const Range r = split_weighted(count, w, i);
        EXPECT_EQ(r.begin, next);
        EXPECT_GE(r.size(), 1u) << count << " part " << i;
        // Where every share is a unit or more, each part is within one unit of its own.
        if (least >= 1) {
          EXPECT_LT(std::abs(double(r.size()) - count * w[size_t(i)] / total), 1.0) << count << " part " << i;
        }
        next = r.end;
      }
      EXPECT_EQ(next, count);
    }
  for (int n = 1; n <= 8; ++n)
    for (uint32_t count : {8u, 13u, 14336u})
      for (int i = 0; i < n; ++i) {
        const Range weighted = split_weighted(count, ShardWeights(size_t(n), 1.5), i), even = split_evenly(count, n, i);
        EXPECT_EQ(weighted.begin, even.begin);
        EXPECT_EQ(weighted.end, even.end);
      }
}

TEST(Shard, WeightedPlanFollowsTheWeightsAndLeavesNoRankEmpty) {
  const ModelConfig c = flagship();
  const Shard big = Shard::for_rank(c, 0, 3, {2, 1, 1}), small = Shard::for_rank(c, 2, 3, {2, 1, 1});
  EXPECT_EQ(big.kv_heads.size(), 4u);
  EXPECT_EQ(small.kv_heads.size(), 2u);
  EXPECT_EQ(big.ffn.size(), 7168u);  // half of 14336, on blocks of 32
  EXPECT_EQ(small.vocab.size(), 32064u);
  // Shares under one unit still get one, from the part furthest above its share.
  for (int r = 0; r < 3; ++r) EXPECT_GE(Shard::for_rank(c, r, 3, {100, 1, 1}).kv_heads.size(), 1u);
  EXPECT_EQ(Shard::for_rank(c, 0, 3, {100, 1, 1}).kv_heads.size(), 6u);
  EXPECT_NE(error_of([] { parse_shard_weights("2,0,1", 3); }).find("'0' is not a positive number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shard_weights("2,1", 3); }).find("2 weights for 3 ranks"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shard_weights("2,,1", 3); }).find("'' is not a positive number"), std::string::npos);
  EXPECT_EQ(parse_shard_weights("31.2,15.6", 2), (ShardWeights{31.2, 15.6}));
}

TEST(Shard, RefusesCountsThatDoNotSplit) {
  ModelConfig c = flagship();
  EXPECT_EQ(error_of([&] { Shard::for_rank(c, 0, 33); }),
            "cannot split the model over 33 ranks: it has only 32 query heads (use at most 32 ranks)");
  EXPECT_NE(error_of([&] { Shard::for_rank(c, 3, 3); }).find("rank 3 of 3 is not valid"), std::string::npos);
  c.ffn_dim = 512;
  c.ffn_block = 256;  // two blocks
  EXPECT_EQ(error_of([&] { Shard::for_rank(c, 1, 2); }), "(no error)");
  EXPECT_NE(error_of([&] { Shard::for_rank(c, 0, 3); }).find("in blocks of 256"), std::string::npos);
}

// R1-Distill-Qwen-1.5B has 2 KV heads of 6 query heads each: up to 12 ranks, 13 refused.
TEST(Shard, RanksUpToTheQwen15BsQueryHeads) {
  MakeOptions o;
  o.arch = "qwen2";
  o.preset = "1.5B";
  const ModelConfig c = resolve_shape(o, 0);
  ASSERT_EQ(c.n_kv_heads, 2u);
  ASSERT_EQ(c.n_heads, 12u);
  for (int n : {2, 3, 5, 12}) EXPECT_EQ(error_of([&] { Shard::for_rank(c, n - 1, n); }), "(no error)") << n;
  EXPECT_EQ(error_of([&] { Shard::for_rank(c, 0, 13); }),
            "cannot split the model over 13 ranks: it has only 12 query heads (use at most 12 ranks)");
}

// R1-Distill-Llama-70B's shape (--preset 70B, Llama 3.1 70B's sizes, head 128), and its splits
// over the 4 and 8 boards it is meant for: 2 or 1 KV heads, a quarter or an eighth of the FFN.
TEST(Shard, The70BPresetIsLlama70BsShapeAndSplitsOverFourAndEightRanks) {
  MakeOptions o;
  o.preset = "70B";
  ModelConfig c = resolve_shape(o, 0);
  EXPECT_EQ(c.dim, 8192u);
  EXPECT_EQ(c.n_layers, 80u);
  EXPECT_EQ(c.n_heads, 64u);
  EXPECT_EQ(c.n_kv_heads, 8u);
  EXPECT_EQ(c.dim / c.n_heads, 128u);
  EXPECT_EQ(c.ffn_dim, 28672u);
  EXPECT_EQ(c.n_vocab, 128256u);
  EXPECT_EQ(c.rope_base, 500000.0f);
  o.n_layers = 2;  // the cuts the runs on a small machine use
  EXPECT_EQ(resolve_shape(o, 0).n_layers, 2u);
  c.ffn_block = 32;
  for (int n : {4, 8}) {
    const Shard last = Shard::for_rank(c, n - 1, n);
    EXPECT_EQ(last.kv_heads.size(), 8u / n) << n;
    EXPECT_EQ(last.q_heads.size(), 64u / n) << n;
    EXPECT_EQ(last.ffn.size(), 28672u / n) << n;
    EXPECT_EQ(last.ffn.end, 28672u) << n;
  }
}

// More ranks than KV heads: KV head k goes to a run of ranks, each holding it alone with a
// contiguous part of its query heads; every query head is held exactly once, and the FFN and
// the vocabulary still split evenly over all ranks.
TEST(Shard, RanksBeyondTheKvHeadsShareThemOnDisjointQueryHeads) {
  const ModelConfig c = flagship();  // 32 query heads, 8 KV heads
  const uint32_t group = c.n_heads / c.n_kv_heads;
  for (int n = 9; n <= 32; ++n) {
    std::vector<int> held(c.n_heads, 0);
    uint32_t last_kv = 0, ffn = 0;
    for (int r = 0; r < n; ++r) {
      const Shard s = Shard::for_rank(c, r, n);
      ASSERT_EQ(s.kv_heads.size(), 1u) << n << " rank " << r;
      EXPECT_GE(s.kv_heads.begin, last_kv);  // the ranks of a KV head are consecutive
      last_kv = s.kv_heads.begin;
      EXPECT_GE(s.q_heads.size(), 1u);
      EXPECT_EQ(s.q_heads.begin / group, s.kv_heads.begin);
      EXPECT_EQ((s.q_heads.end - 1) / group, s.kv_heads.begin);
      for (uint32_t q = s.q_heads.begin; q < s.q_heads.end; ++q) ++held[q];
      EXPECT_EQ(s.ffn.begin, ffn);
      ffn = s.ffn.end;
    }
    EXPECT_EQ(ffn, c.ffn_dim) << n;
    EXPECT_EQ(std::count(held.begin(), held.end(), 1), int(c.n_heads)) << n;
  }
  // 12 ranks: four KV heads with two ranks (2 query heads each), four with one (4 each).
  EXPECT_EQ(Shard::for_rank(c, 0, 12).q_heads.size(), 2u);
  EXPECT_EQ(Shard::for_rank(c, 11, 12).q_heads.size(), 4u);
}

// ---- slices of a real file --------------------------------------------------------------------

// 3 layers, 8/4 heads, Q4_0 matrices and a Q4_0 output: 4 ranks split every tensor.
const std::string& model_file() {
  static const std::string path = test::make_model_file(
      "shard", {.preset = "tiny", .n_layers = 3, .output_type = GgmlType::Q4_0});
  return path;
}

TEST(SlicePlan, RanksPartitionEveryTensor) {
  const GgufFile file = GgufFile::open(model_file());
  const ModelConfig c = ModelConfig::from_gguf(file);
  size_t weights = 0;  // tensors the table loads (rope_freqs goes to the configuration)
  for (const TensorInstance& t : model_tensors(c))
    if (!std::holds_alternative<std::monostate>(t.spec->fills)) ++weights;

  for (int n = 1; n <= int(c.n_kv_heads); ++n) {
    std::map<std::string, std::vector<TensorSlice>> by_tensor;  // rank order
    for (int r = 0; r < n; ++r) {
      const std::vector<TensorSlice> slices = plan_slices(file, c, Shard::for_rank(c, r, n));
      ASSERT_EQ(slices.size(), weights) << "n=" << n;
      for (const TensorSlice& s : slices) by_tensor[s.tensor->name].push_back(s);
    }
    ASSERT_EQ(by_tensor.size(), weights);
    for (const auto& [name, slices] : by_tensor) {
      ASSERT_EQ(slices.size(), size_t(n)) << name;
      const Split split = slices[0].spec->split;
      const GgufTensorInfo& info = *slices[0].tensor;
      const int64_t rows = int64_t(info.rows()), cols = int64_t(info.ne[0]);
      int64_t next = 0;
      for (const TensorSlice& s : slices) {
        if (split.unit == Unit::None) {  // whole on every rank
          EXPECT_TRUE(s.row_begin == 0 && s.row_end == rows && s.col_begin == 0 && s.col_end == cols) << name;
        } else if (split.axis == Axis::Rows) {
          EXPECT_TRUE(s.col_begin == 0 && s.col_end == cols) << name;
          EXPECT_EQ(s.row_begin, next) << name << " n=" << n;
          EXPECT_LT(s.row_begin, s.row_end) << name << " n=" << n;
          next = s.row_end;
        } else {
          EXPECT_TRUE(s.row_begin == 0 && s.row_end == rows) << name;
          EXPECT_EQ(s.col_begin, next) << name << " n=" << n;
          EXPECT_LT(s.col_begin, s.col_end) << name << " n=" << n;
          next = s.col_end;
        }
      }
      if (split.unit != Unit::None) {
        EXPECT_EQ(next, split.axis == Axis::Rows ? rows : cols) << name;
      }
    }
  }
}

// Every member of the weights is filled by its row of the table, whatever the rank count.
TEST(SlicePlan, FillsEveryWeight) {
  for (int n : {1, 3}) {
    for (int r = 0; r < n; ++r) {
      const LoadedModel m = load_model(model_file(), false, r, n);
      auto filled = [](const Matrix& w) { return w.data != nullptr && w.rows > 0 && w.cols > 0; };
      EXPECT_TRUE(filled(m.weights.token_embd));
      EXPECT_TRUE(filled(m.weights.output));
      EXPECT_EQ(m.weights.output.rows, int64_t(m.shard.vocab.size()));
      EXPECT_EQ(m.weights.output_norm.size(), m.config.dim);
      ASSERT_EQ(m.weights.layers.size(), m.config.n_layers);
      for (const LayerWeights& L : m.weights.layers) {
        for (const Matrix* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w1, &L.w2, &L.w3})
          EXPECT_TRUE(filled(*w)) << "rank " << r << " of " << n;
        EXPECT_EQ(L.attn_norm.size(), m.config.dim);
        EXPECT_EQ(L.ffn_norm.size(), m.config.dim);
        EXPECT_EQ(L.w2.cols, int64_t(m.shard.ffn.size()));
        EXPECT_EQ(L.w1.rows, int64_t(m.shard.ffn.size()));
      }
    }
  }
}

// ---- the FFN block is every layer's ------------------------------------------------------------

// A zero-weight F32 model of the table's tensors, with ffn_down of one layer in another type.
std::string write_model(const std::string& name, uint32_t odd_layer, GgmlType odd_type) {
  const ModelConfig c = test::llama_shape(64, 2, 2, 2, 256, 8);
  GgufWriter w;
  w.add("general.architecture", GgufValue::string("llama"));
  w.add("llama.context_length", GgufValue::u32(64));
  w.add("llama.embedding_length", GgufValue::u32(c.dim));
  w.add("llama.block_count", GgufValue::u32(c.n_layers));
  w.add("llama.feed_forward_length", GgufValue::u32(c.ffn_dim));
  w.add("llama.attention.head_count", GgufValue::u32(c.n_heads));
  w.add("llama.vocab_size", GgufValue::u32(c.n_vocab));
  uint64_t bytes = 0;
  for (const TensorInstance& t : model_tensors(c)) {
    if (t.spec->presence == Presence::Optional) continue;
    const bool odd = t.name == "blk." + std::to_string(odd_layer) + ".ffn_down.weight";
    const GgmlType type = odd ? odd_type : GgmlType::F32;
    const std::vector<uint64_t> ne = t.spec->shape(c);
    w.add_tensor(t.name, ne, type);
    bytes += (ne.size() > 1 ? ne[1] : 1) * ggml_row_bytes(type, ne[0]);
  }
  const std::string path = test::scratch_dir("shard_ffn_block_" + name) + "/m.gguf";
  w.open(path);
  const std::vector<char> zeros(bytes);  // every size is a multiple of the 32-byte alignment
  w.write_data(zeros.data(), zeros.size());
  w.close();
  return path;
}

TEST(Shard, FfnBlockComesFromEveryLayer) {
  const GgufFile plain = GgufFile::open(write_model("f32", 1, GgmlType::F32));
  EXPECT_EQ(ModelConfig::from_gguf(plain).ffn_block, 1u);
  // Only the last layer's ffn_down is Q6_K (or Q4_K, Q4_K_M's other type): its 256-element blocks
  // decide how the FFN splits.
  for (GgmlType t : {GgmlType::Q6_K, GgmlType::Q4_K}) {
    const std::string name(ggml_type_name(t));
    const GgufFile mixed = GgufFile::open(write_model(name, 1, t));
    const ModelConfig c = ModelConfig::from_gguf(mixed);
    EXPECT_EQ(c.ffn_block, 256u) << name;
    EXPECT_EQ(Shard::for_rank(c, 0, 1).ffn.size(), 256u) << name;
    EXPECT_NE(error_of([&] { Shard::for_rank(c, 0, 2); }).find("in blocks of 256"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace r1pi
