// Causal grouped-query attention over the KV cache.
#pragma once
#include "layers/kv_cache.h"

namespace r1pi {

class ThreadPool;
struct Kernels;

struct AttentionShape {
  int n_q_heads;    // local query heads
  int n_kv_heads;   // local KV heads (each serves n_q_heads / n_kv_heads query heads)
  int head_dim;
};

// q: B rows of n_q_heads * head_dim (already rotated); the keys and values of positions
// pos0 .. pos0 + B - 1 are already in the cache. Token b attends to positions 0 .. pos0 + b.
// out: B rows like q. Every (token, head) gets the same bytes for any batch, thread count and
// backend (kern: the process's backend unless a test names one): those of the plain loops of
// attention_reference in tests/test_attention.cpp.
void attention(const float* q, const KvCache& cache, int layer, int pos0, int B,
               const AttentionShape& shape, float* out, ThreadPool& pool);
void attention(const Kernels& kern, const float* q, const KvCache& cache, int layer, int pos0,
               int B, const AttentionShape& shape, float* out, ThreadPool& pool);

}  // namespace r1pi
