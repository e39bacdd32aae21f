// Attention in three steps. However they are split over the thread pool, no output bit depends on
// the split, hence neither on the thread count nor on the batch a token came in:
//   1. scores, per (KV head, chunk of positions): the matrix product of the chunk's keys with the
//      query rows of all the head's query heads and tokens (the keys read once for all of them);
//      each score is one dot product of the recipe;
//   2. per query row: the scale and the softmax over the row's own positions (causal);
//   3. per (KV head, slice of head_dim): the weighted sum of the values in position order, the
//      values read once for every query row of the head.
// A batch of several sequences is one such call per run of a sequence's consecutive tokens (each
// reads its own slot), handed to the pool together. With a sliding window a call reads only the
// positions its tokens see, which a window layer's ring (kv_cache.h) holds.
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
#include "layers/linear.h"
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

// One call's work over tokens at positions pos0 .. pos0 + B - 1 of slot seq. Every row array is
// [KV head][row][...] with row r = b * group + g (query head kvh * group + g of token b).
class Attend {
 public:
  Attend(const Kernels& kern, const float* q, const KvCache& cache, int layer, int seq, int pos0, int B,
         const AttentionShape& shape, Scratch& s)
      : kern_(kern), cache_(cache), type_(kv_cache_type_row(cache.type())), keys_(for_type(kern, cache.type())),
        layer_(layer), seq_(seq), pos0_(pos0), B_(B), hd_(shape.head_dim), n_kv_(shape.n_kv_heads),
        group_(shape.n_q_heads / shape.n_kv_heads), rows_(B * group_), n_pos_(pos0 + B),
        lo_(shape.window ? std::max(0, pos0 - shape.window + 1) : 0), stride_(n_pos_ - lo_ + 1),
        held_(cache.positions(layer)), window_(shape.window), sinks_(shape.sinks),
        q_dim_(int64_t(shape.n_q_heads) * hd_),
        scale_(1.0f / std::sqrt(float(hd_))), s_(s) {
    s.q.resize(size_t(n_kv_) * rows_ * hd_);
    s.scores.resize(size_t(n_kv_) * rows_ * stride_);
    s.out.resize(size_t(n_kv_) * rows_ * hd_);
    for (int kvh = 0; kvh < n_kv_; ++kvh)
      for (int b = 0; b < B; ++b)
        std::memcpy(&s.q[(size_t(kvh) * rows_ + size_t(b) * group_) * hd_],
                    q + b * q_dim_ + int64_t(kvh) * group_ * hd_, sizeof(float) * size_t(group_) * hd_);
    x_ = reinterpret_cast<const uint8_t*>(s.q.data());
    x_row_bytes_ = sizeof(float) * size_t(hd_);
    if (activation_type(cache.type()) == GgmlType::Q8_0) {
      x_row_bytes_ = sizeof(block_q8_0) * size_t(hd_ / QK8_0);
      s.q8.resize(size_t(n_kv_) * rows_ * (hd_ / QK8_0));
      for (int r = 0; r < n_kv_ * rows_; ++r)
        kern.quantize_row_q8_0(&s.q[size_t(r) * hd_], &s.q8[size_t(r) * (hd_ / QK8_0)], hd_);
      for (size_t i = 0; i < s.q8.size(); ++i)
        if (q8_0_scale_overflows(s.q8[i])) {
          const int r = int(i / size_t(hd_ / QK8_0));
          throw Error("layer " + std::to_string(layer) + ": a query at position " +
                      std::to_string(pos0 + (r % rows_) / group_) +
                      " is past the largest value a q8_0 KV cache's attention holds (127 x 65504, about "
                      "8.3e6) or not finite: the model's weights are far out of range (--kv-type f32 holds it)");
        }
      x_ = reinterpret_cast<const uint8_t*>(s.q8.data());
    }
  }
  int n_kv() const { return n_kv_; }
  int head_dim() const { return hd_; }
  int chunks() const { return (n_pos_ - lo_ + kScoreChunk - 1) / kScoreChunk; }
  int slices(int threads) const {
    int n = 1;
    while (n_kv_ * n < 2 * threads && hd_ % (n * 2 * type_.min_slice) == 0) n *= 2;
    return n;
  }

  // ---- 1. the scores of every row of KV head kvh against positions of chunk c (lo .. n_pos - 1
  // in all, column t - lo for position t; a row ignores those after its own) ----
  void scores(int kvh, int c) const {
    const int from = lo_ + c * kScoreChunk, to = std::min(n_pos_, lo_ + (c + 1) * kScoreChunk);
    for_each_stretch(from, to, [&](int a, int n) {
      keys_.matmul({hd_, cache_.key(layer_, seq_, kvh, a), cache_.row_bytes(), 0, n,
                    x_ + size_t(kvh) * rows_ * x_row_bytes_, x_row_bytes_, rows_,
                    &s_.scores[size_t(kvh) * rows_ * stride_ + size_t(a - lo_)], stride_});
    });
  }

  // ---- 2. scale and softmax of kvh's rows over each row's positions pos0 + b - window + 1 ..
  // pos0 + b (from 0 without a window), its sink a last column, into p (row stride stride_, room
  // for the sink; p may be the scores themselves). Columns before a row's window get 0. ----
  void softmax(int kvh, float* p) const {
    for (int r = 0; r < rows_; ++r) {
      const float* sr = &s_.scores[(size_t(kvh) * rows_ + r) * stride_];
      float* pr = p + size_t(r) * stride_;
      const int end = pos0_ + r / group_ + 1, first = window_ ? std::max(0, end - window_) : 0;
      const int start = first - lo_, len = end - lo_;  // as columns
      for (int t = 0; t < start; ++t) pr[t] = 0.0f;
      for (int t = start; t < len; ++t) pr[t] = sr[t] * scale_;
      if (sinks_) pr[len] = sinks_[kvh * group_ + r % group_];
      kern_.softmax(pr + start, len - start + (sinks_ ? 1 : 0));
    }
  }
  float* scores_of(int kvh) const { return &s_.scores[size_t(kvh) * rows_ * stride_]; }
  size_t scores_per_head() const { return size_t(rows_) * stride_; }

  // ---- 3. elements [i0, i0 + width) of kvh's outputs: sum_t p_t v_t in position order (the
  // zero weights before a row's window leave its sums +0, as if they were not there) ----
  void values(int kvh, int i0, int width, const float* p, float* out) const {
    const auto weighted_sum = kern_.*type_.weighted_sum;
    float* o = &s_.out[size_t(kvh) * rows_ * hd_ + i0];
    for (int r = 0; r < rows_; ++r) std::memset(o + size_t(r) * hd_, 0, sizeof(float) * width);
    const size_t rb = cache_.row_bytes(), skip = ggml_row_bytes(cache_.type(), uint64_t(i0));
    // Positions lo .. pos0 are every token's; position pos0 + j only those of tokens j and later.
    for_each_stretch(lo_, pos0_ + 1, [&](int a, int n) {
      weighted_sum({width, cache_.value(layer_, seq_, kvh, a) + skip, rb, n, p + (a - lo_), stride_, rows_, o, hd_});
    });
    for (int j = 1; j < B_; ++j)
      weighted_sum({width, cache_.value(layer_, seq_, kvh, pos0_ + j) + skip, rb, 1,
                    p + size_t(j) * group_ * stride_ + pos0_ + j - lo_, stride_, rows_ - j * group_,
                    o + size_t(j) * group_ * hd_, hd_});
    for (int r = 0; r < rows_; ++r)
      std::memcpy(out + (r / group_) * q_dim_ + int64_t(kvh * group_ + r % group_) * hd_ + i0,
                  o + size_t(r) * hd_, sizeof(float) * width);
  }

 private:
  // Calls f(a, n) for the stretches of positions [from, to) that lie one after the other in the
  // cache: all of them, or those before and after a ring's end.
  template <class F>
  void for_each_stretch(int from, int to, F f) const {
    for (int a = from; a < to;) {
      const int n = std::min(to - a, held_ - a % held_);
      f(a, n);
      a += n;
    }
  }

  const Kernels& kern_;
  const KvCache& cache_;
  const KvCacheType& type_;
  const TypeKernels& keys_;
  // Columns are positions lo_ .. n_pos_ - 1 (lo_ 0 but with a window), then a sink's.
  const int layer_, seq_, pos0_, B_, hd_, n_kv_, group_, rows_, n_pos_, lo_, stride_, held_, window_;
  const float* sinks_;
  const int64_t q_dim_;
  const float scale_;
  Scratch& s_;
  const uint8_t* x_;
  size_t x_row_bytes_;
};

// With at least two KV heads per thread (counting every call's heads), one task per head does
// all three steps (one hand-off of the pool for all calls). With fewer (several ranks, one
// sequence), each call goes on its own: the scores per (head, chunk) and the values per (head,
// slice of head_dim), each slice task with its own copy of the head's softmax.
void attend_one(const Attend& a, float* out, ThreadPool& pool) {
  const int chunks = a.chunks(), slices = a.slices(pool.size()), width = a.head_dim() / slices;
  pool.parallel_for(int64_t(a.n_kv()) * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) a.scores(int(task / chunks), int(task % chunks));
  }, 1);
  pool.parallel_for(int64_t(a.n_kv()) * slices, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> p;
    p.resize(a.scores_per_head());
    for (int64_t task = t0; task < t1; ++task) {
      const int kvh = int(task / slices);
      a.softmax(kvh, p.data());
      a.values(kvh, int(task % slices) * width, width, p.data(), out);
    }
  }, 1);
}

// calls[i] writes the rows from outs[i].
void attend(const std::vector<Attend>& calls, const std::vector<float*>& outs, ThreadPool& pool) {
  const int n_kv = calls.front().n_kv(), heads = n_kv * int(calls.size());
  if (heads < 2 * pool.size()) {
    for (size_t i = 0; i < calls.size(); ++i) attend_one(calls[i], outs[i], pool);
    return;
  }
  pool.parallel_for(heads, [&](int64_t h0, int64_t h1) {
    for (int64_t h = h0; h < h1; ++h) {
      const Attend& a = calls[size_t(h / n_kv)];
      const int kvh = int(h % n_kv);
      for (int c = 0; c < a.chunks(); ++c) a.scores(kvh, c);
      a.softmax(kvh, a.scores_of(kvh));
      a.values(kvh, 0, a.head_dim(), a.scores_of(kvh), outs[size_t(h / n_kv)]);
    }
  }, 1);
}

}  // namespace

void attention(const Kernels& kern, const float* q, const KvCache& cache, int layer,
               const std::vector<BatchRun>& runs, const AttentionShape& shape, float* out, ThreadPool& pool) {
  // The calls: each run, a long one in groups of tokens whose scores fit kMaxScores.
  struct Piece {
    BatchRun part;  // tokens first .. first + count - 1 at positions pos ..
    int64_t scores;
  };
  std::vector<Piece> pieces;
  for (const BatchRun& r : runs) {
    const int64_t per_token = int64_t(shape.n_q_heads) * (r.pos + r.count);
    const int tokens = int(std::clamp<int64_t>(kMaxScores / per_token, 1, r.count));
    for (int b0 = 0; b0 < r.count; b0 += tokens) {
      const int n = std::min(tokens, r.count - b0);
      pieces.push_back({{r.first + b0, n, r.seq, r.pos + b0}, int64_t(shape.n_q_heads) * n * (r.pos + b0 + n)});
    }
  }
  // The pool takes them in waves whose scores together fit kMaxScores (at least one call each),
  // each call with a scratch of its own, kept between calls.
  thread_local std::vector<Scratch> scratch;
  const int64_t q_dim = int64_t(shape.n_q_heads) * shape.head_dim;
  std::vector<Attend> calls;
  std::vector<float*> outs;
  for (size_t i = 0; i < pieces.size();) {
    size_t end = i + 1;
    int64_t held = pieces[i].scores;
    while (end < pieces.size() && held + pieces[end].scores <= kMaxScores) held += pieces[end++].scores;
    if (scratch.size() < end - i) scratch.resize(end - i);
    calls.clear();
    outs.clear();
    calls.reserve(end - i);
    for (size_t j = i; j < end; ++j) {
      const BatchRun& p = pieces[j].part;
      calls.emplace_back(kern, q + p.first * q_dim, cache, layer, p.seq, p.pos, p.count, shape, scratch[j - i]);
      outs.push_back(out + p.first * q_dim);
    }
    attend(calls, outs, pool);
    i = end;
  }
}

void attention(const float* q, const KvCache& cache, int layer, const std::vector<BatchRun>& runs,
               const AttentionShape& shape, float* out, ThreadPool& pool) {
  attention(kernels(), q, cache, layer, runs, shape, out, pool);
}

}  // namespace r1pi
