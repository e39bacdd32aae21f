#include "layers/llama_forward.h"

#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "layers/attention.h"
#include "neon/kernels.h"
#include "ggml/quantize.h"
#include "common/thread_pool.h"

namespace r1pi {

namespace {

// NaN or inf weights would otherwise pass unnoticed: the Q8_0 quantisation of the next matmul's
// input (and of the ranks' partial sums) turns them into finite noise, and NaN logits make every
// choice token 0. So the residual updates and the logits are checked where they are made, before
// any rounding; the message says where (n floats, `per` to a position from pos0 on).
void check_finite(const float* v, size_t n, size_t per, int pos0, const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw Error(what + " at position " + std::to_string(pos0 + int(i / per)) + " is " +
                  (std::isnan(v[i]) ? "NaN" : "infinite") +
                  ": the model's weights hold NaN or inf values (a damaged or badly converted file)");
}

}  // namespace

LlamaForward::LlamaForward(const LlamaConfig& config, const LlamaWeights& weights,
                           const Shard& shard, int n_ctx, ThreadPool& pool, ShardSync& sync,
                           GgmlType kv_type)
    : config_(config), weights_(weights), shard_(shard), pool_(pool), sync_(sync),
      cache_(int(config.n_layers), n_ctx, int(shard.kv_heads.size()), int(config.head_dim), kv_type),
      rope_(config, n_ctx),
      n_q_local_(int(shard.kv_heads.size() * (config.n_heads / config.n_kv_heads))),
      n_kv_local_(int(shard.kv_heads.size())) {}

void LlamaForward::resize(int B) {
  const size_t dim = config_.dim, hd = config_.head_dim;
  x_.resize(B * dim);
  xb_.resize(B * dim);
  query_.resize(B * n_q_local_ * hd);
  key_.resize(B * n_kv_local_ * hd);
  value_.resize(B * n_kv_local_ * hd);
  att_.resize(B * n_q_local_ * hd);
  delta_.resize(B * dim);
  gate_.resize(B * size_t(shard_.ffn.size()));
  up_.resize(B * size_t(shard_.ffn.size()));
}

const std::vector<float>& LlamaForward::forward(const int32_t* tokens, int B, int pos,
                                                LogitsFor which) {
  if (B <= 0) throw Error("forward: empty batch");
  if (pos < 0 || pos + B > cache_.n_ctx())
    throw Error("context overflow: positions " + std::to_string(pos) + ".." +
                std::to_string(pos + B - 1) + " do not fit the context of " +
                std::to_string(cache_.n_ctx()) + " tokens (raise -c/--ctx-size)");
  for (int b = 0; b < B; ++b)
    if (tokens[b] < 0 || uint32_t(tokens[b]) >= config_.n_vocab)
      throw Error("token id " + std::to_string(tokens[b]) + " is outside the vocabulary of " +
                  std::to_string(config_.n_vocab));
  resize(B);
  const Kernels& kern = kernels();
  const int64_t dim = config_.dim, hd = config_.head_dim;
  const int64_t q_dim = n_q_local_ * hd, kv_dim = n_kv_local_ * hd, ffn = shard_.ffn.size();
  const float eps = config_.rms_eps;

  // ---- token embedding ----
  for (int b = 0; b < B; ++b)
    dequantize_row(weights_.token_embd.type, weights_.token_embd.row(tokens[b]), &x_[b * dim], dim);

  for (uint32_t l = 0; l < config_.n_layers; ++l) {
    const LayerWeights& L = weights_.layers[l];

    // ---- attention: xb = rmsnorm(x); q, k, v = Wq xb, Wk xb, Wv xb ----
    for (int b = 0; b < B; ++b) kern.rmsnorm(&xb_[b * dim], &x_[b * dim], L.attn_norm.data(), dim, eps);
    in_.set(xb_.data(), B, dim);
    matmul_each({{L.wq, query_.data()}, {L.wk, key_.data()}, {L.wv, value_.data()}}, in_, pool_);

    // ---- RoPE on q and k, then k and v into the cache ----
    for (int b = 0; b < B; ++b) {
      kern.rope(&query_[b * q_dim], n_q_local_, hd, rope_.cos_at(pos + b), rope_.sin_at(pos + b));
      kern.rope(&key_[b * kv_dim], n_kv_local_, hd, rope_.cos_at(pos + b), rope_.sin_at(pos + b));
      cache_.store(int(l), pos + b, &key_[b * kv_dim], &value_[b * kv_dim]);
    }

    // ---- causal grouped-query attention over the cache ----
    attention(query_.data(), cache_, int(l), pos, B, {n_q_local_, n_kv_local_, int(hd)}, att_.data(),
              pool_);

    // ---- x += Wo att (the ranks' partial sums combined) ----
    in_.set(att_.data(), B, q_dim);
    matmul(L.wo, in_, delta_.data(), pool_);
    check_finite(delta_.data(), size_t(B * dim), size_t(dim), pos,
                 "the attention output (wo) of layer " + std::to_string(l));
    sync_.reduce_sum(delta_.data(), B, dim);
    for (int64_t i = 0; i < B * dim; ++i) x_[i] += delta_[i];

    // ---- FFN: x += W2 (silu(W1 xb) * W3 xb), xb = rmsnorm(x) ----
    for (int b = 0; b < B; ++b) kern.rmsnorm(&xb_[b * dim], &x_[b * dim], L.ffn_norm.data(), dim, eps);
    in_.set(xb_.data(), B, dim);
    matmul_each({{L.w1, gate_.data()}, {L.w3, up_.data()}}, in_, pool_);
    for (int b = 0; b < B; ++b) kern.silu_mul(&gate_[b * ffn], &up_[b * ffn], ffn);
    in_.set(gate_.data(), B, ffn);
    matmul(L.w2, in_, delta_.data(), pool_);
    check_finite(delta_.data(), size_t(B * dim), size_t(dim), pos,
                 "the FFN output (w2) of layer " + std::to_string(l));
    sync_.reduce_sum(delta_.data(), B, dim);
    for (int64_t i = 0; i < B * dim; ++i) x_[i] += delta_[i];
    if (observer_) observer_(l, x_.data(), B * dim);
  }

  // ---- final norm and logits of this shard's vocabulary rows ----
  const int first = which == LogitsFor::All ? 0 : B - 1;
  const int n_out = which == LogitsFor::None ? 0 : B - first;
  logits_.resize(size_t(n_out) * shard_.vocab.size());
  if (n_out > 0) {
    for (int b = 0; b < n_out; ++b)
      kern.rmsnorm(&xb_[b * dim], &x_[(first + b) * dim], weights_.output_norm.data(), dim, eps);
    in_.set(xb_.data(), n_out, dim);
    matmul(weights_.output, in_, logits_.data(), pool_);
  }
  check_finite(logits_.data(), logits_.size(), size_t(shard_.vocab.size()), pos + first,
               "a logit (of rows " + std::to_string(shard_.vocab.begin) + ".." +
                   std::to_string(shard_.vocab.end - 1) + ")");
  return logits_;
}

}  // namespace r1pi
