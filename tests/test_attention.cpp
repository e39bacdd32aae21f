// Attention (src/layers/attention.cpp) against its definition, plain loops over one (token, head)
// at a time with the scalar kernels, byte for byte: on every backend, for 1 to 5000 positions
// (every length up to 300, and around the score chunks' boundaries beyond), odd and even head
// counts and groups, prefill batches that cross the token groups, 1 to 4 threads, F32 and F16
// caches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/thread_pool.h"
#include "ggml/fp16.h"
#include "layers/attention.h"
#include "neon/kernels.h"
#include "test_support.h"

namespace r1pi {
namespace {

using test::normal_row;
using test::same_floats;

// Every key (value) of a layer's cache as floats: [head][position][head_dim].
std::vector<float> as_floats(const KvCache& c, int layer, int n_heads, int n_pos, bool values) {
  const size_t hd = size_t(c.head_dim());
  std::vector<float> f(size_t(n_heads) * n_pos * hd);
  for (int h = 0; h < n_heads; ++h)
    for (int t = 0; t < n_pos; ++t) {
      const uint8_t* row = values ? c.value(layer, h, t) : c.key(layer, h, t);
      float* out = &f[(size_t(h) * n_pos + t) * hd];
      for (size_t i = 0; i < hd; ++i) {
        uint16_t half;
        if (c.type() == GgmlType::F32) std::memcpy(&out[i], row + 4 * i, 4);
        else out[i] = (std::memcpy(&half, row + 2 * i, 2), fp16_to_fp32(half));
      }
    }
  return f;
}

// The definition: scores s_t = vec_dot_f32(q, k_t) * (1 / sqrt(head_dim)), softmax over
// 0 .. pos, out = 0 then out = fma(p_t, v_t, out) for t = 0 .. pos in order.
void attention_reference(const float* q, const KvCache& cache, int layer, int pos0, int B,
                         const AttentionShape& shape, float* out) {
  const Kernels& S = kernels_scalar();
  const int hd = shape.head_dim, group = shape.n_q_heads / shape.n_kv_heads, n_pos = pos0 + B;
  const float scale = 1.0f / std::sqrt(float(hd));
  const std::vector<float> keys = as_floats(cache, layer, shape.n_kv_heads, n_pos, false);
  const std::vector<float> values = as_floats(cache, layer, shape.n_kv_heads, n_pos, true);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < shape.n_q_heads; ++h) {
      const int pos = pos0 + b, kvh = h / group;
      const float* qh = q + (int64_t(b) * shape.n_q_heads + h) * hd;
      const float* k = &keys[size_t(kvh) * n_pos * hd];
      const float* v = &values[size_t(kvh) * n_pos * hd];
      std::vector<float> p(size_t(pos) + 1);
      for (int t = 0; t <= pos; ++t) p[size_t(t)] = S.vec_dot_f32(hd, qh, k + size_t(t) * hd) * scale;
      S.softmax(p.data(), pos + 1);
      float* oh = out + (int64_t(b) * shape.n_q_heads + h) * hd;
      for (int i = 0; i < hd; ++i) oh[i] = 0.0f;
      for (int t = 0; t <= pos; ++t)
        for (int i = 0; i < hd; ++i) oh[i] = std::fma(p[size_t(t)], v[size_t(t) * hd + i], oh[i]);
    }
}

// A cache of n positions of random keys and values (layer 1 of 2, so that a layer offset matters).
KvCache random_cache(const AttentionShape& shape, int n, GgmlType type, uint32_t seed) {
  KvCache c(2, n, shape.n_kv_heads, shape.head_dim, type);
  std::mt19937 rng(seed);
  for (int layer = 0; layer < 2; ++layer)
    for (int t = 0; t < n; ++t) {
      const std::vector<float> k = normal_row(int64_t(shape.n_kv_heads) * shape.head_dim, rng, 2.0f);
      const std::vector<float> v = normal_row(int64_t(shape.n_kv_heads) * shape.head_dim, rng);
      c.store(layer, t, k.data(), v.data());
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
  attention(kern, q.data(), cache, 1, pos0, B, shape, got.data(), pool);
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
      for (int pos = 0; pos < 300; ++pos)
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

// A batch long enough that its scores are computed in several groups of tokens.
TEST(Attention, LongPrefillInTokenGroups) {
  const AttentionShape shape = {16, 4, 8};
  const KvCache cache = random_cache(shape, 5000, GgmlType::F32, 4);
  ThreadPool pool(2);
  for (const Kernels* k : all_backends())
    ASSERT_TRUE(matches_reference(*k, cache, shape, 4900, 100, pool, 5)) << k->name;
}

TEST(Attention, F16CacheEqualsReference) {
  for (const Kernels* k : all_backends())
    for (const AttentionShape& shape : kShapes) {
      const KvCache cache = random_cache(shape, 300, GgmlType::F16, 6);
      ThreadPool pool(2);
      for (auto [pos0, B] : {std::pair{0, 1}, {130, 1}, {299, 1}, {0, 40}, {100, 77}})
        ASSERT_TRUE(matches_reference(*k, cache, shape, pos0, B, pool, uint32_t(pos0 + B)))
            << k->name << " hd " << shape.head_dim << " pos0 " << pos0 << " B " << B;
    }
}

}  // namespace
}  // namespace r1pi
