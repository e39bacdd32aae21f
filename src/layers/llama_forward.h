// The Llama forward pass of one rank over its shard (the whole model when there is one rank).
#pragma once
#include <cstdint>
#include <functional>
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
  // kv_type: the KV cache's type (F32, the exact path; F16 or Q8_0, smaller: KvCache).
  LlamaForward(const LlamaConfig& config, const LlamaWeights& weights, const Shard& shard,
               int n_ctx, ThreadPool& pool, ShardSync& sync, GgmlType kv_type = GgmlType::F32);

  // Feeds B tokens at positions pos .. pos + B - 1 (their keys and values enter the cache, and
  // later positions of the cache are forgotten). Returns the logits of this shard's vocabulary rows
  // for the last token or for all B tokens: rows of shard.vocab.size() floats.
  const std::vector<float>& forward(const int32_t* tokens, int B, int pos, LogitsFor which);

  // Called with the residual stream (B rows of dim) after every layer: lets ranks compare their
  // hidden states.
  using LayerObserver = std::function<void(uint32_t layer, const float* x, int64_t n)>;
  void set_layer_observer(LayerObserver observer) { observer_ = std::move(observer); }
  int n_ctx() const { return cache_.n_ctx(); }
  uint64_t kv_cache_bytes() const { return cache_.bytes(); }
  GgmlType kv_cache_type() const { return cache_.type(); }
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
  std::vector<float> x_, xb_, query_, key_, value_, att_, delta_, gate_, up_, logits_;
  LinearInput in_;
  LayerObserver observer_;
};

}  // namespace r1pi
