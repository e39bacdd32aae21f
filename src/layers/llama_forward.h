// The Llama forward pass of one rank over its shard (the whole model when there is one rank).
#pragma once
#include <cstdint>
#include <vector>

#include "layers/kv_cache.h"
#include "layers/linear.h"
#include "layers/rope_table.h"
#include "layers/shard_sync.h"
#include "model/llama_config.h"
#include "model/llama_weights.h"
#include "model/shard.h"

namespace r1pi {

class ThreadPool;

enum class LogitsFor { None, Last, All };

class LlamaForward {
 public:
  LlamaForward(const LlamaConfig& config, const LlamaWeights& weights, const Shard& shard,
               int n_ctx, ThreadPool& pool, ShardSync& sync);

  // Feeds B tokens at positions pos .. pos + B - 1 (their keys and values enter the cache, and
  // later positions of the cache are forgotten). Returns the logits of this shard's vocabulary rows
  // for the last token or for all B tokens: rows of shard.vocab.size() floats.
  const std::vector<float>& forward(const int32_t* tokens, int B, int pos, LogitsFor which);

  // The residual stream after the last forward (B rows of dim), for tests that compare ranks.
  const std::vector<float>& hidden() const { return x_; }
  int n_ctx() const { return cache_.n_ctx(); }
  const LlamaConfig& config() const { return config_; }
  const Shard& shard() const { return shard_; }

 private:
  void resize(int B);

  const LlamaConfig& config_;
  const LlamaWeights& weights_;
  Shard shard_;
  ThreadPool& pool_;
  ShardSync& sync_;
  KvCache cache_;
  RopeTable rope_;
  int n_q_local_, n_kv_local_;
  // Scratch for B tokens, resized on demand.
  std::vector<float> x_, xb_, q_, k_, v_, att_, delta_, gate_, up_, logits_;
  LinearInput in_;
};

}  // namespace r1pi
