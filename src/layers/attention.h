// Causal grouped-query attention over the KV cache.
#pragma once
#include "layers/kv_cache.h"

namespace r1pi {

class ThreadPool;

struct AttentionShape {
  int n_q_heads;    // local query heads
  int n_kv_heads;   // local KV heads (each serves n_q_heads / n_kv_heads query heads)
  int head_dim;
};

// q: B rows of n_q_heads * head_dim (already rotated); the keys and values of positions
// pos0 .. pos0 + B - 1 are already in the cache. Token b attends to positions 0 .. pos0 + b.
// out: B rows like q. Each (token, head) is computed alone, the same way for any batch.
void attention(const float* q, KvCache& cache, int layer, int pos0, int B,
               const AttentionShape& shape, float* out, ThreadPool& pool);

}  // namespace r1pi
