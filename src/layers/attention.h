// Causal grouped-query attention over the KV cache.
#pragma once
#include <vector>

#include "layers/batch.h"
#include "layers/kv_cache.h"

namespace r1pi {

class ThreadPool;
struct Kernels;

struct AttentionShape {
  int n_q_heads;    // local query heads
  int n_kv_heads;   // local KV heads (each serves n_q_heads / n_kv_heads query heads)
  int head_dim;
  int window = 0;   // a query sees itself and the window - 1 positions before it; 0: every position
  // One per local query head (gpt-oss): an extra softmax column of that value (unscaled) and no
  // value row, which takes its share of the probability; nullptr: none.
  const float* sinks = nullptr;
};

// q: one row of n_q_heads * head_dim per batch token (already rotated); each run's keys and values
// (positions pos .. pos + count - 1 of its slot) are already in the cache. A token at position p
// of slot s attends to positions 0 .. p of slot s (p - window + 1 .. p with a window, which is all
// a window layer's ring must hold). out: rows like q. Every (token, head) gets the
// same bytes for any batch, thread count, other runs and backend (kern: the process's backend
// unless a test names one): those of the plain loops of attention_reference in
// tests/test_attention.cpp.
void attention(const float* q, const KvCache& cache, int layer, const std::vector<BatchRun>& runs,
               const AttentionShape& shape, float* out, ThreadPool& pool);
void attention(const Kernels& kern, const float* q, const KvCache& cache, int layer,
               const std::vector<BatchRun>& runs, const AttentionShape& shape, float* out, ThreadPool& pool);

}  // namespace r1pi
