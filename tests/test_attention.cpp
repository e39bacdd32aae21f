// Attention (src/layers/attention.cpp) against its definition, plain loops over one (token, head)
// at a time with the scalar kernels, byte for byte: on every backend, for 1 to 5000 positions
// (every length up to 160, every 7th to 300, and around the score chunks' boundaries beyond), odd and even head
// counts and groups, prefill batches that cross the token groups, 1 to 4 threads, F32, F16 and
// Q8_0 caches; and the F16 and Q8_0 caches against the exact F32 one within a bound derived from
// their rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.h"
#include "common/thread_pool.h"
#include "ggml/fp16.h"
#include "ggml/quantize.h"
#include "layers/attention.h"
#include "neon/kernels.h"
#include "test_support.h"

namespace r1pi {
namespace {

using test::normal_row;
using test::same_floats;

// Keys or values of a layer's F32 or F16 cache as floats: [head][position][head_dim].
std::vector<float> as_floats(const KvCache& c, int layer, int n_heads, int n_pos, bool values) {
  const size_t hd = size_t(c.head_dim());
  std::vector<float> f(size_t(n_heads) * n_pos * hd);
  for (int h = 0; h < n_heads; ++h)
    for (int t = 0; t < n_pos; ++t) {
      const uint8_t* row = values ? c.value(layer, 0, h, t) : c.key(layer, 0, h, t);
      float* out = &f[(size_t(h) * n_pos + t) * hd];
      for (size_t i = 0; i < hd; ++i) {
        uint16_t half;
        if (c.type() == GgmlType::F32) std::memcpy(&out[i], row + 4 * i, 4);
        else out[i] = (std::memcpy(&half, row + 2 * i, 2), fp16_to_fp32(half));
      }
    }
  return f;
}

// The definition: scores s_t = q . k_t * (1 / sqrt(head_dim)) as the scalar vec_dot_f32 (F32, F16
// keys as floats) or vec_dot of Q8_0 keys with q quantised to Q8_0, for t from first = pos -
// window + 1 (0 without a window) to pos; softmax over them and the head's sink, if any, as a last
// column; out = 0 then, for t = first .. pos in order, out = fma(p_t, v_t, out) (Q8_0:
// fma(p_t * d, q, out) per block).
void attention_reference(const float* q, const KvCache& cache, int layer, int pos0, int B,
                         const AttentionShape& shape, float* out) {
  const Kernels& S = kernels_scalar();
  const int hd = shape.head_dim, group = shape.n_q_heads / shape.n_kv_heads, n_pos = pos0 + B;
  const bool q8 = cache.type() == GgmlType::Q8_0;
  const float scale = 1.0f / std::sqrt(float(hd));
  const std::vector<float> keys = q8 ? std::vector<float>() : as_floats(cache, layer, shape.n_kv_heads, n_pos, false);
  const std::vector<float> values = q8 ? std::vector<float>() : as_floats(cache, layer, shape.n_kv_heads, n_pos, true);
  std::vector<block_q8_0> q8_row(size_t(hd) / QK8_0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < shape.n_q_heads; ++h) {
      const int pos = pos0 + b, kvh = h / group;
      const float* qh = q + (int64_t(b) * shape.n_q_heads + h) * hd;
      if (q8) quantize_row_q8_0_ref(qh, q8_row.data(), hd);
      const int first = shape.window ? std::max(0, pos - shape.window + 1) : 0;
      std::vector<float> p(size_t(pos) + 2);
      for (int t = first; t <= pos; ++t)
        p[size_t(t)] = (q8 ? for_type(S, GgmlType::Q8_0).vec_dot(hd, cache.key(layer, 0, kvh, t), q8_row.data())
                           : S.vec_dot_f32(hd, qh, &keys[(size_t(kvh) * n_pos + t) * hd])) * scale;
      if (shape.sinks) p[size_t(pos) + 1] = shape.sinks[h];
      S.softmax(p.data() + first, pos + 1 - first + (shape.sinks ? 1 : 0));
      float* oh = out + (int64_t(b) * shape.n_q_heads + h) * hd;
      for (int i = 0; i < hd; ++i) oh[i] = 0.0f;
      for (int t = first; t <= pos; ++t) {
        if (!q8) {
          const float* v = &values[(size_t(kvh) * n_pos + t) * hd];
          for (int i = 0; i < hd; ++i) oh[i] = std::fma(p[size_t(t)], v[i], oh[i]);
          continue;
        }
        const block_q8_0* v = reinterpret_cast<const block_q8_0*>(cache.value(layer, 0, kvh, t));
        for (int blk = 0; blk < hd / QK8_0; ++blk) {
          const float pd = p[size_t(t)] * fp16_to_fp32(v[blk].d);
          for (int i = 0; i < QK8_0; ++i)
            oh[blk * QK8_0 + i] = std::fma(pd, float(v[blk].qs[i]), oh[blk * QK8_0 + i]);
        }
      }
    }
}

// A cache of n positions of random keys and values (layer 1 of 2, so that a layer offset matters);
// the same seed gives the same floats whatever the type.
KvCache random_cache(const AttentionShape& shape, int n, GgmlType type, uint32_t seed) {
  KvCache c(2, n, shape.n_kv_heads, shape.head_dim, type);
  std::mt19937 rng(seed);
  for (int layer = 0; layer < 2; ++layer)
    for (int t = 0; t < n; ++t) {
      const std::vector<float> k = normal_row(int64_t(shape.n_kv_heads) * shape.head_dim, rng, 2.0f);
      const std::vector<float> v = normal_row(int64_t(shape.n_kv_heads) * shape.head_dim, rng);
      c.store(layer, 0, t, k.data(), v.data());
    }
  return c;
}

std::vector<const Kernels*> all_backends() { return available_backends(); }

// attention over positions pos0 .. pos0 + B - 1 with `kern` and `threads` against the reference.
::testing::AssertionResult matches_reference(const Kernels& kern, const KvCache& cache,
                                             const AttentionShape& shape, int pos0, int B,
                                             ThreadPool& pool, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t q_dim = int64_t(shape.n_q_heads) * shape.head_dim;
  const std::vector<float> q = normal_row(B * q_dim, rng);
  std::vector<float> got(size_t(B * q_dim), -1.0f), want(got.size());
  attention(kern, q.data(), cache, 1, {{0, B, 0, pos0}}, shape, got.data(), pool);
  attention_reference(q.data(), cache, 1, pos0, B, shape, want.data());
  return same_floats(got.data(), want.data(), got.size());
}

const AttentionShape kShapes[] = {
    {4, 2, 16},   // group 2
    {3, 1, 8},    // odd head count, one KV head
    {6, 3, 32},   // odd KV heads
    {8, 8, 24},   // no grouping, head_dim not a power of two
    {5, 5, 13},   // odd head_dim: the kernels' tails
};

TEST(Attention, DecodeEveryLengthTo300) {
  ThreadPool pool(2);
  for (const Kernels* k : all_backends())
    for (const AttentionShape& shape : kShapes) {
      const KvCache cache = random_cache(shape, 300, GgmlType::F32, 1);
      for (int pos = 0; pos < 300; pos += pos < 160 ? 1 : 7)
        ASSERT_TRUE(matches_reference(*k, cache, shape, pos, 1, pool, uint32_t(pos)))
            << k->name << " heads " << shape.n_q_heads << "/" << shape.n_kv_heads << " hd "
            << shape.head_dim << " pos " << pos;
    }
}

TEST(Attention, DecodeAroundChunkBoundariesTo5000) {
  const AttentionShape shape = {6, 2, 16};
  const KvCache cache = random_cache(shape, 5000, GgmlType::F32, 2);
  ThreadPool pool(3);
  for (const Kernels* k : all_backends())
    for (int pos : {383, 384, 385, 511, 512, 1023, 1024, 1025, 2047, 4095, 4096, 4097, 4999})
      ASSERT_TRUE(matches_reference(*k, cache, shape, pos, 1, pool, uint32_t(pos)))
          << k->name << " pos " << pos;
}

TEST(Attention, PrefillBatchesAndThreads) {
  for (const Kernels* k : all_backends())
    for (const AttentionShape& shape : {kShapes[0], kShapes[2], kShapes[4]}) {
      const KvCache cache = random_cache(shape, 400, GgmlType::F32, 3);
      for (int threads = 1; threads <= 4; ++threads) {
        ThreadPool pool(threads);
        for (auto [pos0, B] : {std::pair{0, 1}, {0, 7}, {0, 64}, {5, 33}, {120, 17}, {127, 130}, {250, 150}})
          ASSERT_TRUE(matches_reference(*k, cache, shape, pos0, B, pool, uint32_t(pos0 + B)))
              << k->name << " hd " << shape.head_dim << " pos0 " << pos0 << " B " << B
              << " threads " << threads;
      }
    }
}

// gpt-oss's attention: a window (positions before it get no weight) and a sink per query head,
// decode and prefill, across the window's edge, on every backend and thread count.
TEST(Attention, WindowAndSinksEqualReference) {
  std::mt19937 rng(9);
  for (const Kernels* k : all_backends())
    for (AttentionShape shape : {kShapes[0], kShapes[2], kShapes[4]}) {
      const std::vector<float> sinks = normal_row(shape.n_q_heads, rng, 2.0f);
      shape.window = 8;
      const KvCache cache = random_cache(shape, 200, GgmlType::F32, 8);
      for (int threads : {1, 3}) {
        ThreadPool pool(threads);
        for (const float* s : {static_cast<const float*>(nullptr), sinks.data()}) {
          shape.sinks = s;
          for (auto [pos0, B] : {std::pair{0, 1}, {6, 1}, {7, 1}, {8, 1}, {150, 1}, {0, 20}, {5, 40}, {120, 70}})
            ASSERT_TRUE(matches_reference(*k, cache, shape, pos0, B, pool, uint32_t(pos0 + B)))
                << k->name << " hd " << shape.head_dim << " pos0 " << pos0 << " B " << B << " threads " << threads
                << (s ? " with sinks" : " without sinks");
        }
      }
      // A sink takes probability: without it the same queries give other bytes (the test can fail).
      ThreadPool pool(1);
      shape.sinks = nullptr;
      const int64_t q_dim = int64_t(shape.n_q_heads) * shape.head_dim;
      const std::vector<float> q = normal_row(q_dim, rng);
      std::vector<float> plain(static_cast<size_t>(q_dim)), sunk(static_cast<size_t>(q_dim));
      attention(*k, q.data(), cache, 1, {{0, 1, 0, 100}}, shape, plain.data(), pool);
      shape.sinks = sinks.data();
      attention(*k, q.data(), cache, 1, {{0, 1, 0, 100}}, shape, sunk.data(), pool);
      EXPECT_FALSE(same_floats(plain.data(), sunk.data(), plain.size())) << k->name;
    }
}

// A batch long enough that its scores are computed in several groups of tokens.
TEST(Attention, LongPrefillInTokenGroups) {
  const AttentionShape shape = {16, 4, 8};
  const KvCache cache = random_cache(shape, 5000, GgmlType::F32, 4);
  ThreadPool pool(2);
  for (const Kernels* k : all_backends())
    ASSERT_TRUE(matches_reference(*k, cache, shape, 4900, 100, pool, 5)) << k->name;
}

TEST(Attention, F16AndQ8_0CachesEqualReference) {
  ThreadPool pool(2);
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0})
    for (const Kernels* k : all_backends())
      for (const AttentionShape& shape : {AttentionShape{4, 2, 32}, {3, 1, 64}, {6, 3, 96}, {5, 5, 13}}) {
        if (type == GgmlType::Q8_0 && shape.head_dim % QK8_0 != 0) continue;
        const KvCache cache = random_cache(shape, 300, type, 6);
        for (auto [pos0, B] : {std::pair{0, 1}, {130, 1}, {299, 1}, {0, 40}, {100, 77}})
          ASSERT_TRUE(matches_reference(*k, cache, shape, pos0, B, pool, uint32_t(pos0 + B)))
              << ggml_type_name(type) << " " << k->name << " hd " << shape.head_dim << " pos0 "
              << pos0 << " B " << B;
      }
}

TEST(Attention, Q8_0CacheNeedsWholeBlocks) {
  EXPECT_THROW(KvCache(1, 4, 2, 48, GgmlType::Q8_0), Error);
  EXPECT_THROW(KvCache(1, 4, 2, 64, GgmlType::Q6_K), Error);
}

// The largest difference q8 . k8 - q . k over positions 0 .. n - 1 of KV head kvh (the query as the
// cache type's kernels take it) and the largest |v8 - v|, from the stored rows against the floats.
struct QuantErrors {
  double scores = 0, values = 0, v_max = 0;
  double abs_dot = 0;  // the largest sum of |q_i k_i|: the scale of the dot products' float rounding
};

QuantErrors quant_errors(const KvCache& exact, const KvCache& small, const float* q, int n_q_per_kv,
                         int kvh, int n) {
  const int hd = exact.head_dim();
  const std::vector<float> ek = as_floats(exact, 1, kvh + 1, n, false), ev = as_floats(exact, 1, kvh + 1, n, true);
  std::vector<float> sk, sv;
  std::vector<float> qd(size_t(n_q_per_kv) * hd);  // the query as the small cache's product sees it
  if (small.type() == GgmlType::Q8_0) {
    std::vector<block_q8_0> b(size_t(hd) / QK8_0);
    for (int g = 0; g < n_q_per_kv; ++g) {
      quantize_row_q8_0_ref(q + size_t(g) * hd, b.data(), hd);
      dequantize_row(GgmlType::Q8_0, reinterpret_cast<const uint8_t*>(b.data()), &qd[size_t(g) * hd], hd);
    }
    sk.resize(size_t(n) * hd);
    sv.resize(size_t(n) * hd);
    for (int t = 0; t < n; ++t) {
      dequantize_row(GgmlType::Q8_0, small.key(1, 0, kvh, t), &sk[size_t(t) * hd], hd);
      dequantize_row(GgmlType::Q8_0, small.value(1, 0, kvh, t), &sv[size_t(t) * hd], hd);
    }
  } else {
    std::copy(q, q + qd.size(), qd.begin());
    const std::vector<float> k = as_floats(small, 1, kvh + 1, n, false), v = as_floats(small, 1, kvh + 1, n, true);
    sk.assign(k.begin() + size_t(kvh) * n * hd, k.end());
    sv.assign(v.begin() + size_t(kvh) * n * hd, v.end());
  }
  QuantErrors e;
  for (int t = 0; t < n; ++t) {
    const float* k = &ek[(size_t(kvh) * n + t) * hd];
    const float* v = &ev[(size_t(kvh) * n + t) * hd];
    for (int g = 0; g < n_q_per_kv; ++g) {
      double d = 0, a = 0;
      for (int i = 0; i < hd; ++i) {
        d += double(qd[size_t(g) * hd + i]) * sk[size_t(t) * hd + i] - double(q[size_t(g) * hd + i]) * k[i];
        a += std::fabs(double(q[size_t(g) * hd + i]) * k[i]);
      }
      e.scores = std::max(e.scores, std::fabs(d));
      e.abs_dot = std::max(e.abs_dot, a);
    }
    for (int i = 0; i < hd; ++i) {
      e.values = std::max(e.values, std::fabs(double(sv[size_t(t) * hd + i]) - v[i]));
      e.v_max = std::max(e.v_max, std::fabs(double(v[i])));
    }
  }
  return e;
}

// F16 and Q8_0 against the exact F32 cache, within the bound their rounding allows: with every
// score off by at most ds (scaled, with both dot products' float rounding), each softmax weight is off by a factor within e^(+-2 ds), so
//   |out8 - out| <= (e^(2 ds) - 1) (v_max + dv) + dv,
// plus the float rounding of both computations (a few ulp of v_max per position and element).
TEST(Attention, F16AndQ8_0WithinTheirRoundingOfF32) {
  const AttentionShape shape = {8, 2, 64};
  const int n = 1000, group = 4;
  ThreadPool pool(2);
  const KvCache exact = random_cache(shape, n, GgmlType::F32, 8);
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    const KvCache small = random_cache(shape, n, type, 8);
    std::mt19937 rng(9);
    for (int pos : {0, 1, 63, 500, n - 1}) {
      const std::vector<float> q = normal_row(int64_t(shape.n_q_heads) * shape.head_dim, rng);
      std::vector<float> want(q.size()), got(q.size());
      attention(kernels(), q.data(), exact, 1, {{0, 1, 0, pos}}, shape, want.data(), pool);
      attention(kernels(), q.data(), small, 1, {{0, 1, 0, pos}}, shape, got.data(), pool);
      double worst = 0;
      for (int kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
        const QuantErrors e = quant_errors(exact, small, q.data() + size_t(kvh) * group * shape.head_dim, group, kvh, pos + 1);
        const double ds = (e.scores + 4.0 * shape.head_dim * 0x1p-24 * e.abs_dot) / std::sqrt(double(shape.head_dim));
        const double bound = (std::exp(2 * ds) - 1) * (e.v_max + e.values) + e.values +
                             4.0 * (pos + shape.head_dim + 8) * 0x1p-24 * e.v_max;
        for (int i = kvh * group * shape.head_dim; i < (kvh + 1) * group * shape.head_dim; ++i) {
          const double d = std::fabs(double(got[size_t(i)]) - want[size_t(i)]);
          ASSERT_LE(d, bound) << ggml_type_name(type) << " pos " << pos << " element " << i;
          worst = std::max(worst, d / bound);
        }
      }
      // The bound is not vacuous: the smaller cache does change the output.
      EXPECT_GT(worst, 0.0) << ggml_type_name(type) << " pos " << pos;
    }
  }
}


}  // namespace
}  // namespace r1pi
