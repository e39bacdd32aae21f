// Attention in three passes of the thread pool. Each pass splits its work so that no output bit
// depends on the split, hence on the thread count or on the batch a token came in:
//   1. scores, per (KV head, chunk of positions): the matrix product of the chunk's keys with the
//      query rows of all the head's query heads and tokens (the keys read once for all of them);
//      each score is one dot product of the recipe;
//   2. per query row: the scale and the softmax over the row's own positions (causal);
//   3. per (KV head, slice of head_dim): the weighted sum of the values in position order, the
//      values read once for every query row of the head.
// Each result is the reference's: a score is the same dot product, the softmax the same call, an
// output element the same chain of fmas over the positions.
#include "layers/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/thread_pool.h"
#include "neon/kernels.h"

namespace r1pi {

namespace {

// Positions per scores task: a chunk's keys (64 KB of F32 at head_dim 128) stay in L2 while the
// matmul passes over them once per four query rows.
constexpr int kScoreChunk = 128;
// Scores held at once (floats, 16 MB): a longer batch goes in groups of tokens.
constexpr int64_t kMaxScores = int64_t(1) << 22;

struct Scratch {
  std::vector<float> q, scores, out;
  std::vector<block_q8_0> q8;  // the query rows as Q8_0, for a Q8_0 cache's keys
};

// Per cache type: the kernel of its values (its keys go through the type's matmul, on query rows
// of the type's activation type) and the narrowest slice of head_dim it can take.
struct CacheRow {
  GgmlType type;
  void (*Kernels::*weighted_sum)(const WeightedSumArgs&);
  int min_slice;
};
constexpr CacheRow kCacheTypes[] = {
    {GgmlType::F32, &Kernels::weighted_sum_f32, 16},
    {GgmlType::F16, &Kernels::weighted_sum_f16, 16},
    {GgmlType::Q8_0, &Kernels::weighted_sum_q8_0, QK8_0},
};

const CacheRow& cache_row(GgmlType type) {
  for (const CacheRow& row : kCacheTypes)
    if (row.type == type) return row;
  throw Error("attention: no kernels for a KV cache of type " + std::string(ggml_type_name(type)));
}

// Tokens at positions pos0 .. pos0 + B - 1; every row array is [KV head][row][...] with row
// r = b * group + g (query head kvh * group + g of token b).
void attend(const Kernels& kern, const float* q, const KvCache& cache, int layer, int pos0, int B,
            const AttentionShape& shape, float* out, ThreadPool& pool, Scratch& s) {
  const int hd = shape.head_dim, n_kv = shape.n_kv_heads;
  const int group = shape.n_q_heads / n_kv, rows = B * group;
  const int64_t q_dim = int64_t(shape.n_q_heads) * hd;
  const int n_pos = pos0 + B;  // the batch's last token sees them all
  const float scale = 1.0f / std::sqrt(float(hd));
  s.q.resize(size_t(n_kv) * rows * hd);
  s.scores.resize(size_t(n_kv) * rows * n_pos);
  s.out.resize(size_t(n_kv) * rows * hd);
  for (int kvh = 0; kvh < n_kv; ++kvh)
    for (int b = 0; b < B; ++b)
      std::memcpy(&s.q[(size_t(kvh) * rows + size_t(b) * group) * hd],
                  q + b * q_dim + int64_t(kvh) * group * hd, sizeof(float) * size_t(group) * hd);

  // ---- 1. scores of every row against positions 0 .. n_pos - 1 (a row ignores those after its own) ----
  const CacheRow& type = cache_row(cache.type());
  const TypeKernels& keys = for_type(kern, cache.type());
  const uint8_t* x = reinterpret_cast<const uint8_t*>(s.q.data());
  size_t x_row_bytes = sizeof(float) * size_t(hd);
  if (activation_type(cache.type()) == GgmlType::Q8_0) {
    x_row_bytes = sizeof(block_q8_0) * size_t(hd / QK8_0);
    s.q8.resize(size_t(n_kv) * rows * (hd / QK8_0));
    for (int r = 0; r < n_kv * rows; ++r)
      kern.quantize_row_q8_0(&s.q[size_t(r) * hd], &s.q8[size_t(r) * (hd / QK8_0)], hd);
    x = reinterpret_cast<const uint8_t*>(s.q8.data());
  }
  const int chunks = (n_pos + kScoreChunk - 1) / kScoreChunk;
  pool.parallel_for(int64_t(n_kv) * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      const int kvh = int(task / chunks), c = int(task % chunks);
      const MatmulArgs a{hd, cache.key(layer, kvh, 0), cache.row_bytes(), int64_t(c) * kScoreChunk,
                         std::min<int64_t>(n_pos, int64_t(c + 1) * kScoreChunk),
                         x + size_t(kvh) * rows * x_row_bytes, x_row_bytes, rows,
                         &s.scores[size_t(kvh) * rows * n_pos], n_pos};
      keys.matmul(a);
    }
  }, 1);

  // ---- 2. scale and softmax over each row's positions 0 .. pos0 + b ----
  pool.parallel_for(int64_t(n_kv) * rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* sr = &s.scores[size_t(r) * n_pos];
      const int len = pos0 + int(r % rows) / group + 1;
      for (int t = 0; t < len; ++t) sr[t] = sr[t] * scale;
      kern.softmax(sr, len);
    }
  }, 1);

  // ---- 3. out = sum_t p_t v_t in position order, per (KV head, slice of head_dim) ----
  // Slices only to give every thread work when there are few KV heads (several ranks).
  int slices = 1;
  while (n_kv * slices < 2 * pool.size() && hd % (slices * 2 * type.min_slice) == 0) slices *= 2;
  const int width = hd / slices;
  const auto weighted_sum = kern.*type.weighted_sum;
  pool.parallel_for(int64_t(n_kv) * slices, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      const int kvh = int(task / slices), i0 = int(task % slices) * width;
      float* o = &s.out[size_t(kvh) * rows * hd + i0];
      const float* p = &s.scores[size_t(kvh) * rows * n_pos];
      for (int r = 0; r < rows; ++r) std::memset(o + size_t(r) * hd, 0, sizeof(float) * width);
      const uint8_t* v = cache.value(layer, kvh, 0) + ggml_row_bytes(cache.type(), uint64_t(i0));
      // Positions 0 .. pos0 are every token's; position pos0 + j only those of tokens j and later.
      weighted_sum({width, v, cache.row_bytes(), pos0 + 1, p, n_pos, rows, o, hd});
      for (int j = 1; j < B; ++j)
        weighted_sum({width, v + size_t(pos0 + j) * cache.row_bytes(), cache.row_bytes(), 1,
                      p + size_t(j) * group * n_pos + pos0 + j, n_pos, rows - j * group,
                      o + size_t(j) * group * hd, hd});
      for (int r = 0; r < rows; ++r)
        std::memcpy(out + (r / group) * q_dim + int64_t(kvh * group + r % group) * hd + i0,
                    o + size_t(r) * hd, sizeof(float) * width);
    }
  }, 1);
}

}  // namespace

void attention(const Kernels& kern, const float* q, const KvCache& cache, int layer, int pos0,
               int B, const AttentionShape& shape, float* out, ThreadPool& pool) {
  thread_local Scratch scratch;
  const int64_t q_dim = int64_t(shape.n_q_heads) * shape.head_dim;
  const int64_t per_token = int64_t(shape.n_q_heads) * (pos0 + B);
  const int tokens = int(std::clamp<int64_t>(kMaxScores / per_token, 1, B));
  for (int b0 = 0; b0 < B; b0 += tokens)
    attend(kern, q + b0 * q_dim, cache, layer, pos0 + b0, std::min(tokens, B - b0), shape,
           out + b0 * q_dim, pool, scratch);
}

void attention(const float* q, const KvCache& cache, int layer, int pos0, int B,
               const AttentionShape& shape, float* out, ThreadPool& pool) {
  attention(kernels(), q, cache, layer, pos0, B, shape, out, pool);
}

}  // namespace r1pi
