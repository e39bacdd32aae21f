// The forward pass of one rank over its shard (the whole model when there is one rank), for any
// architecture of the registry: a batch of tokens of one or more sequences in, logit rows out.
// Choosing tokens from the logits happens above it (runtime/token_source.h).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "layers/batch.h"
#include "layers/kv_cache.h"
#include "layers/linear.h"
#include "layers/moe_routing.h"
#include "layers/rope_table.h"
#include "layers/shard_sync.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/shard.h"

namespace r1pi {

class ThreadPool;

class ModelForward {
 public:
  // kv_type: the KV cache's type (F32, the exact path; F16 or Q8_0, smaller: KvCache); n_seqs
  // slots of n_ctx positions; kern: the kernels (the process's backend unless a test names one);
  // max_run: the most tokens of one sequence a pass stores before it attends (0: n_ctx), which
  // sizes a sliding-window layer's ring (kv_cache.h). A longer run still works: it goes in passes.
  ModelForward(const ModelConfig& config, const ModelWeights& weights, const Shard& shard, int n_ctx,
               ThreadPool& pool, ShardSync& sync, GgmlType kv_type = GgmlType::F32, int n_seqs = 1,
               const Kernels& kern = kernels(), int max_run = 0);

  // Feeds the batch: every token's keys and values enter its slot at its position (positions the
  // slot held from a sequence's first token in the batch on are forgotten first). Returns the
  // logits of this shard's vocabulary rows for the tokens whose logits the batch wants, in batch
  // order: rows of shard.vocab.size() floats. Throws r1pi::Error for a batch check() refuses, or
  // for weights that give NaN or inf. A sequence whose slot cannot continue where it does (a ring
  // overwrote the window before it: KvCache::resumable) is fed again from its start first; each
  // token's bytes are those of any other way of feeding it.
  const std::vector<float>& forward(const Batch& batch);
  // Throws r1pi::Error naming the problem when the batch cannot run: empty, a token outside the
  // vocabulary, a slot that does not exist, positions outside the context, or a sequence whose
  // tokens are not at consecutive positions continuing what its slot holds.
  void check(const Batch& batch) const;

  // Called with the residual stream (B rows of dim) after every layer: lets ranks compare their
  // hidden states.
  using LayerObserver = std::function<void(uint32_t layer, const float* x, int64_t n)>;
  void set_layer_observer(LayerObserver observer) { observer_ = std::move(observer); }
  int n_ctx() const { return cache_.n_ctx(); }
  int n_seqs() const { return cache_.n_seqs(); }
  KvCache& cache() { return cache_; }
  const KvCache& cache() const { return cache_; }
  uint64_t kv_cache_bytes() const { return cache_.bytes(); }
  GgmlType kv_cache_type() const { return cache_.type(); }
  const ModelConfig& config() const { return config_; }
  const Shard& shard() const { return shard_; }

 private:
  void resize(int B);
  // One pass over the batch, its runs no longer than the cache's max_run.
  const std::vector<float>& forward_pass(const Batch& batch);
  // Feeds slot seq's tokens 0 .. n - 1 again, without logits.
  void refeed(int seq, int n);
  // x += the block's output (the ranks' partial sums combined), checked finite first.
  void attention_block(uint32_t layer, const LayerWeights& L, const Batch& batch, const std::vector<BatchRun>& runs);
  void ffn_block(uint32_t layer, const LayerWeights& L, const Batch& batch);
  // delta_ = this rank's part of the mixture of experts' output for xb_ (in_), B tokens.
  void moe_ffn(uint32_t layer, const LayerWeights& L, const Batch& batch);
  // x += the ranks' summed delta_, plus `once` (a bias each rank holds whole, added after the
  // sync: token b's row at b * once_stride; stride 0: one row for every token; empty: none).
  void add_to_residual(const Batch& batch, const std::string& what, const std::vector<float>& once = {},
                       int64_t once_stride = 0);
  static void add_bias(float* y, const std::vector<float>& bias);
  void norm_heads(float* x, int n_heads, const std::vector<float>& w) const;

  const ModelConfig& config_;
  const ModelWeights& weights_;
  const Kernels& kern_;
  Shard shard_;
  ThreadPool& pool_;
  ShardSync& sync_;
  KvCache cache_;
  RopeTable rope_;
  int n_q_local_, n_kv_local_;
  // Scratch for B tokens, resized on demand.
  std::vector<float> x_, xb_, query_, key_, value_, att_, delta_, gate_, up_, logits_;
  std::vector<float> split_logits_;  // a batch fed in several passes: its rows in batch order
  LinearInput in_;
  // Mixture of experts: router outputs, each token's chosen experts, and the (token, choice)
  // pairs grouped by expert: their rows of the inputs, gated activations and outputs.
  std::vector<float> router_, moe_x_, moe_gate_, moe_up_, moe_y_;
  std::vector<float> moe_bias_;      // per token: its experts' down biases times their weights
  std::vector<ExpertChoice> choices_;
  std::vector<int> choice_row_;      // per (token, choice): its row in moe_x_ / moe_y_, -1: none here
  std::vector<LinearInput> expert_in_, expert_hidden_;
  LayerObserver observer_;
};

}  // namespace r1pi
