#include "layers/attention.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "neon/kernels.h"
#include "common/thread_pool.h"

namespace r1pi {

void attention(const float* q, KvCache& cache, int layer, int pos0, int B,
               const AttentionShape& shape, float* out, ThreadPool& pool) {
  const Kernels& kern = kernels();
  const int hd = shape.head_dim;
  const int group = shape.n_q_heads / shape.n_kv_heads;
  const int q_dim = shape.n_q_heads * hd;
  const float scale = 1.0f / std::sqrt(float(hd));
  pool.parallel_for(int64_t(B) * shape.n_q_heads, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> scores;
    for (int64_t task = t0; task < t1; ++task) {
      const int b = int(task / shape.n_q_heads), h = int(task % shape.n_q_heads);
      const int pos = pos0 + b, kvh = h / group;
      const float* qh = q + int64_t(b) * q_dim + int64_t(h) * hd;
      scores.resize(size_t(pos) + 1);
      // ---- scores = q . k / sqrt(head_dim), softmax over positions 0..pos ----
      for (int t = 0; t <= pos; ++t)
        scores[t] = kern.vec_dot_f32(hd, qh, cache.key(layer, kvh, t)) * scale;
      kern.softmax(scores.data(), pos + 1);
      // ---- out = sum_t p_t v_t, in position order ----
      float* oh = out + int64_t(b) * q_dim + int64_t(h) * hd;
      std::memset(oh, 0, sizeof(float) * size_t(hd));
      for (int t = 0; t <= pos; ++t) kern.axpy(oh, scores[t], cache.value(layer, kvh, t), hd);
    }
  }, 1);
}

}  // namespace r1pi
