#include "layers/model_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/thread_pool.h"
#include "ggml/quantize.h"
#include "layers/attention.h"
#include "layers/ffn_activation.h"
#include "layers/linear.h"
#include "neon/kernels.h"

namespace r1pi {

namespace {

// NaN or inf weights would otherwise pass unnoticed: the Q8_0 quantisation of the next matmul's
// input (and of the ranks' partial sums) turns them into finite noise, and NaN logits make every
// choice token 0. So the residual updates and the logits are checked where they are made, before
// any rounding; the message says where (rows of `per` floats, row r at position positions[r]).
void check_finite(const float* v, size_t n, size_t per, const std::vector<int32_t>& positions,
                  const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw Error(what + " at position " + std::to_string(positions[i / per]) + " is " +
                  (std::isnan(v[i]) ? "NaN" : "infinite") +
                  ": the model's weights hold NaN or inf values (a damaged or badly converted file)");
}

// An activation Q8_0 cannot hold used to be quantised with an inf scale and its products lost (every
// attn_norm weight at 1e7 ran as a model without attention, exit 0): where and what instead.
[[noreturn]] void throw_out_of_range(const ActivationRangeError& e, const std::string& where,
                                     const std::vector<int32_t>& positions) {
  throw Error(where + ": " + e.what() + " at position " + std::to_string(positions[size_t(e.row)]) +
              ": the model's weights are far out of range (a damaged or badly converted file)");
}

}  // namespace

ModelForward::ModelForward(const ModelConfig& config, const ModelWeights& weights, const Shard& shard,
                           int n_ctx, ThreadPool& pool, ShardSync& sync, GgmlType kv_type, int n_seqs,
                           const Kernels& kern, int max_run)
    : config_(config), weights_(weights), kern_(kern), shard_(shard), pool_(pool), sync_(sync),
      cache_(int(config.n_layers), n_ctx, int(shard.kv_heads.size()), int(config.head_dim), kv_type, n_seqs,
             config.layer_windows(), max_run),
      rope_(config),
      n_q_local_(int(shard.q_heads.size())),
      n_kv_local_(int(shard.kv_heads.size())) {}

void ModelForward::resize(int B) {
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

void ModelForward::check(const Batch& batch) const {
  if (batch.size() == 0) throw Error("forward: empty batch");
  std::vector<int> next(size_t(cache_.n_seqs()), -1);  // each sequence's next position in the batch
  for (int i = 0; i < batch.size(); ++i) {
    const int32_t token = batch.tokens[size_t(i)];
    const int seq = batch.seqs[size_t(i)], pos = batch.positions[size_t(i)];
    if (token < 0 || uint32_t(token) >= config_.n_vocab)
      throw Error("token id " + std::to_string(token) + " is outside the vocabulary of " +
                  std::to_string(config_.n_vocab));
    if (seq < 0 || seq >= cache_.n_seqs())
      throw Error("sequence " + std::to_string(seq) + " has no slot (the cache holds " +
                  std::to_string(cache_.n_seqs()) + ")");
    if (pos < 0 || pos >= cache_.n_ctx())
      throw Error("context overflow: position " + std::to_string(pos) + " does not fit the context of " +
                  std::to_string(cache_.n_ctx()) + " tokens (raise -c/--ctx-size)");
    int& want = next[size_t(seq)];
    if (want < 0 && pos > int(cache_.tokens(seq).size()))
      throw Error("sequence " + std::to_string(seq) + " continues at position " + std::to_string(pos) +
                  " but its slot holds " + std::to_string(cache_.tokens(seq).size()) + " positions");
    if (want >= 0 && pos != want)
      throw Error("sequence " + std::to_string(seq) + "'s tokens are at positions " + std::to_string(want - 1) +
                  " then " + std::to_string(pos) + " (they must follow each other)");
    want = pos + 1;
  }
}

const std::vector<float>& ModelForward::forward(const Batch& batch) {
  if (cache_.max_run() >= cache_.n_ctx()) return forward_pass(batch);  // no ring: one pass, as ever
  check(batch);
  for (const BatchRun& r : runs_of(batch))
    if (!cache_.resumable(r.seq, r.pos)) refeed(r.seq, r.pos);
  // Each sequence's tokens (at consecutive positions, in batch order) in passes of max_run: pass
  // k holds every sequence's k-th stretch.
  const int limit = cache_.max_run();
  std::vector<std::vector<int>> of_seq(size_t(cache_.n_seqs()));
  for (int b = 0; b < batch.size(); ++b) of_seq[size_t(batch.seqs[size_t(b)])].push_back(b);
  size_t passes = 1;
  for (const std::vector<int>& tokens : of_seq) passes = std::max(passes, (tokens.size() + limit - 1) / size_t(limit));
  if (passes == 1) return forward_pass(batch);
  std::vector<int> row_of(size_t(batch.size()), -1);  // each wanted row's place in the output
  int rows = 0;
  for (int b = 0; b < batch.size(); ++b)
    if (batch.logits[size_t(b)]) row_of[size_t(b)] = rows++;
  const size_t vocab = shard_.vocab.size();
  split_logits_.assign(size_t(rows) * vocab, 0.0f);
  for (size_t k = 0; k < passes; ++k) {
    Batch pass;
    std::vector<int> from;
    for (const std::vector<int>& tokens : of_seq)
      for (size_t i = k * limit; i < std::min(tokens.size(), (k + 1) * limit); ++i) {
        const size_t b = size_t(tokens[i]);
        pass.add(batch.tokens[b], batch.seqs[b], batch.positions[b], batch.logits[b]);
        from.push_back(int(b));
      }
    if (pass.size() == 0) continue;
    const std::vector<float>& out = forward_pass(pass);
    size_t row = 0;
    for (size_t i = 0; i < from.size(); ++i)
      if (pass.logits[i]) {
        std::copy_n(out.begin() + ptrdiff_t(row++ * vocab), vocab,
                    split_logits_.begin() + ptrdiff_t(size_t(row_of[size_t(from[i])]) * vocab));
      }
  }
  return split_logits_;
}

void ModelForward::refeed(int seq, int n) {
  const std::vector<int32_t> tokens(cache_.tokens(seq).begin(), cache_.tokens(seq).begin() + n);
  for (int pos = 0; pos < n; pos += cache_.max_run()) {
    const int count = std::min(cache_.max_run(), n - pos);
    forward_pass(Batch::run(tokens.data() + pos, count, pos, LogitsFor::None, seq));
  }
}

// One pass: embed, then per layer x += attention(x), x += ffn(x), then the logits.
const std::vector<float>& ModelForward::forward_pass(const Batch& batch) {
  check(batch);
  const std::vector<BatchRun> runs = runs_of(batch);
  // What the slots held from each sequence's first position on is forgotten now: a failure below
  // leaves them holding less, never a mix.
  for (const BatchRun& r : runs) cache_.truncate(r.seq, r.pos);
  const int B = batch.size();
  resize(B);
  const int64_t dim = config_.dim;

  for (int b = 0; b < B; ++b)
    dequantize_row(weights_.token_embd.type, weights_.token_embd.row(batch.tokens[size_t(b)]), &x_[b * dim], dim);

  for (uint32_t l = 0; l < config_.n_layers; ++l) {
    const LayerWeights& L = weights_.layers[l];
    try {
      attention_block(l, L, batch, runs);
      ffn_block(l, L, batch);
    } catch (const ActivationRangeError& e) {
      throw_out_of_range(e, "layer " + std::to_string(l), batch.positions);
    }
    if (observer_) observer_(l, x_.data(), B * dim);
  }

  // ---- final norm and logits of this shard's vocabulary rows, for the tokens that want them ----
  std::vector<int32_t> positions;
  for (int b = 0; b < B; ++b)
    if (batch.logits[size_t(b)]) {
      kern_.rmsnorm(&xb_[positions.size() * dim], &x_[b * dim], weights_.output_norm.data(), dim, config_.rms_eps);
      positions.push_back(batch.positions[size_t(b)]);
    }
  logits_.resize(positions.size() * shard_.vocab.size());
  if (!positions.empty()) {
    in_.set(xb_.data(), int(positions.size()), dim, "the output's input (output_norm's output)");
    try {
      matmul(weights_.output, in_, logits_.data(), pool_, kern_);
    } catch (const ActivationRangeError& e) {
      throw_out_of_range(e, "the output layer", positions);
    }
  }
  check_finite(logits_.data(), logits_.size(), size_t(shard_.vocab.size()), positions,
               "a logit (of rows " + std::to_string(shard_.vocab.begin) + ".." +
                   std::to_string(shard_.vocab.end - 1) + ")");
  for (int b = 0; b < B; ++b) cache_.append(batch.seqs[size_t(b)], batch.tokens[size_t(b)]);
  return logits_;
}

// x += Wo attention(rope(q), rope(k), v) (+ bo), xb = rmsnorm(x), q = Wq xb (+ bq) (per-head norm),
// k likewise, v = Wv xb (+ bv); attention within the layer's window, with its sinks; the optional
// parts are those the layer has. Keys and values enter the cache.
void ModelForward::attention_block(uint32_t l, const LayerWeights& L, const Batch& batch,
                                   const std::vector<BatchRun>& runs) {
  const int B = batch.size();
  const int64_t dim = config_.dim, hd = config_.head_dim;
  const int64_t q_dim = n_q_local_ * hd, kv_dim = n_kv_local_ * hd;
  for (int b = 0; b < B; ++b) kern_.rmsnorm(&xb_[b * dim], &x_[b * dim], L.attn_norm.data(), dim, config_.rms_eps);
  in_.set(xb_.data(), B, dim, "the attention input (attn_norm's output)");
  matmul_each({{L.wq, query_.data()}, {L.wk, key_.data()}, {L.wv, value_.data()}}, in_, pool_, kern_);

  for (int b = 0; b < B; ++b) {
    float *q = &query_[b * q_dim], *k = &key_[b * kv_dim], *v = &value_[b * kv_dim];
    add_bias(q, L.bq);
    add_bias(k, L.bk);
    add_bias(v, L.bv);
    norm_heads(q, n_q_local_, L.q_norm);
    norm_heads(k, n_kv_local_, L.k_norm);
    const int pos = batch.positions[size_t(b)];
    rope_.rotate(q, n_q_local_, pos, kern_);
    rope_.rotate(k, n_kv_local_, pos, kern_);
    cache_.store(int(l), batch.seqs[size_t(b)], pos, k, v);
  }
  const AttentionShape shape{n_q_local_, n_kv_local_, int(hd), int(config_.window_of(l)),
                             L.sinks.empty() ? nullptr : L.sinks.data()};
  attention(kern_, query_.data(), cache_, int(l), runs, shape, att_.data(), pool_);

  in_.set(att_.data(), B, q_dim, "the attention output (wo's input)");
  matmul(L.wo, in_, delta_.data(), pool_, kern_);
  add_to_residual(batch, "the attention output (wo) of layer " + std::to_string(l), L.bo);
}

// x += W2 (silu(W1 xb) * W3 xb), xb = rmsnorm(x); in a layer with experts, x += their mixture.
void ModelForward::ffn_block(uint32_t l, const LayerWeights& L, const Batch& batch) {
  const int B = batch.size();
  const int64_t dim = config_.dim, ffn = shard_.ffn.size();
  for (int b = 0; b < B; ++b) kern_.rmsnorm(&xb_[b * dim], &x_[b * dim], L.ffn_norm.data(), dim, config_.rms_eps);
  in_.set(xb_.data(), B, dim, "the FFN input (ffn_norm's output)");
  if (L.has_experts()) {
    moe_ffn(l, L, batch);
    add_to_residual(batch, "the experts' output (ffn_down_exps) of layer " + std::to_string(l), moe_bias_,
                    int64_t(dim));
    return;
  }
  matmul_each({{L.w1, gate_.data()}, {L.w3, up_.data()}}, in_, pool_, kern_);
  for (int b = 0; b < B; ++b) gated_activation(config_.arch->activation, &gate_[b * ffn], &up_[b * ffn], ffn, kern_);
  in_.set(gate_.data(), B, ffn, "the FFN's gated activations (w2's input)");
  matmul(L.w2, in_, delta_.data(), pool_, kern_);
  add_to_residual(batch, "the FFN output (w2) of layer " + std::to_string(l));
}

// The router's logits (whole on every rank, so every rank picks the same experts) and each token's
// choice (moe_routing.h); then every chosen expert once for all the tokens that chose it (grouped
// by expert, experts in index order, tokens in batch order: each expert's weights are read once
// per forward) on this rank's units of it; then each token's sum of its experts' outputs times
// their weights (axpy), in the order of its choices. So no element depends on the batch: the grouped
// matmuls give each (row, token) element the bytes it has in any batch, and the sums are per token.
void ModelForward::moe_ffn(uint32_t l, const LayerWeights& L, const Batch& batch) {
  const int B = batch.size(), E = int(config_.n_experts), k = int(config_.n_experts_used);
  const int64_t dim = config_.dim;
  router_.resize(size_t(B) * E);
  matmul(L.router, in_, router_.data(), pool_, kern_);
  for (int b = 0; b < B; ++b) add_bias(&router_[size_t(b) * E], L.router_bias);
  // The same values on every rank: a bad router stops every rank with this one message.
  check_finite(router_.data(), router_.size(), size_t(E), batch.positions,
               "the router output (ffn_gate_inp) of layer " + std::to_string(l));
  choices_.resize(size_t(B) * k);
  for (int b = 0; b < B; ++b)
    choose_experts(&router_[size_t(b) * E], E, k, &choices_[size_t(b) * k], kern_, config_.arch->gating);

  // The rows of the (token, choice) pairs whose expert this rank holds units of, expert by expert.
  const std::vector<Range>& held = shard_.expert_units;
  std::vector<int> first(size_t(E) + 1, 0);
  for (const ExpertChoice& c : choices_)
    if (held[c.expert].size() > 0) ++first[c.expert + 1];
  for (int e = 0; e < E; ++e) first[size_t(e) + 1] += first[size_t(e)];
  const int rows = first[size_t(E)];
  std::vector<int> next(first.begin(), first.end() - 1);
  std::vector<int> token_of_row(static_cast<size_t>(rows));
  choice_row_.assign(choices_.size(), -1);
  moe_x_.resize(size_t(rows) * dim);
  for (size_t p = 0; p < choices_.size(); ++p) {
    const uint32_t e = choices_[p].expert;
    if (held[e].size() == 0) continue;
    const int row = next[e]++;
    choice_row_[p] = row;
    token_of_row[size_t(row)] = int(p) / k;
    std::memcpy(&moe_x_[size_t(row) * dim], &xb_[(p / size_t(k)) * dim], size_t(dim) * sizeof(float));
  }

  // Each chosen expert's gate and up on its tokens, all in one pass of the pool; a Q8_0 input out of
  // range shows in xb's own quantisation first, where its row is the batch's.
  struct Group {
    int expert, row0, n, units;
    size_t hidden;  // its n x units gated activations' offset in moe_gate_ / moe_up_
  };
  std::vector<Group> groups;
  size_t hidden = 0;
  for (int e = 0; e < E; ++e) {
    const int n = first[size_t(e) + 1] - first[size_t(e)];
    if (n == 0) continue;
    groups.push_back({e, first[size_t(e)], n, int(held[size_t(e)].size()), hidden});
    hidden += size_t(n) * held[size_t(e)].size();
  }
  moe_gate_.resize(hidden);
  moe_up_.resize(hidden);
  moe_y_.resize(size_t(rows) * dim);
  expert_in_.resize(groups.size());
  expert_hidden_.resize(groups.size());
  if (activation_type(L.gate_exps[0].type) == GgmlType::Q8_0 || activation_type(L.up_exps[0].type) == GgmlType::Q8_0)
    in_.ensure_q8_0(pool_, kern_);
  std::vector<InputProduct> products;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Group& G = groups[g];
    expert_in_[g].set(&moe_x_[size_t(G.row0) * dim], G.n, dim, "the FFN input (ffn_norm's output)");
    products.push_back({&L.gate_exps[size_t(G.expert)], &expert_in_[g], &moe_gate_[G.hidden]});
    products.push_back({&L.up_exps[size_t(G.expert)], &expert_in_[g], &moe_up_[G.hidden]});
  }
  matmul_inputs(products, pool_, kern_);

  // The biases of gate and up (the rank's units of them), the activation, then each expert's down
  // on its tokens' activations, in one pass again.
  products.clear();
  for (size_t g = 0; g < groups.size(); ++g) {
    const Group& G = groups[g];
    for (int r = 0; r < G.n; ++r) {
      const size_t at = G.hidden + size_t(r) * size_t(G.units);
      if (!L.gate_exps_bias.empty()) {
        add_bias(&moe_gate_[at], L.gate_exps_bias[size_t(G.expert)]);
        add_bias(&moe_up_[at], L.up_exps_bias[size_t(G.expert)]);
      }
      gated_activation(config_.arch->activation, &moe_gate_[at], &moe_up_[at], G.units, kern_);
    }
    const Matrix& down = L.down_exps[size_t(G.expert)];
    expert_hidden_[g].set(&moe_gate_[G.hidden], G.n, G.units, "the experts' gated activations (ffn_down_exps' input)");
    // Quantised here rather than inside the matmul, so that an out-of-range row names its token.
    if (activation_type(down.type) == GgmlType::Q8_0) {
      try {
        expert_hidden_[g].ensure_q8_0(pool_, kern_);
      } catch (const ActivationRangeError& err) {
        throw ActivationRangeError(err.what(), token_of_row[size_t(G.row0 + err.row)]);
      }
    }
    products.push_back({&down, &expert_hidden_[g], &moe_y_[size_t(G.row0) * dim]});
  }
  matmul_inputs(products, pool_, kern_);

  for (int b = 0; b < B; ++b) {
    float* d = &delta_[size_t(b) * dim];
    std::fill(d, d + dim, 0.0f);
    for (int i = 0; i < k; ++i) {
      const int row = choice_row_[size_t(b) * k + i];
      if (row < 0) continue;  // this rank holds none of that expert's units
      kern_.axpy(d, choices_[size_t(b) * k + i].weight, &moe_y_[size_t(row) * dim], dim);
    }
  }
  // The down biases, whole on every rank, weighted as their experts: added once, after the sync.
  moe_bias_.clear();
  if (L.down_exps_bias.empty()) return;
  moe_bias_.assign(size_t(B) * dim, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < k; ++i) {
      const ExpertChoice& c = choices_[size_t(b) * k + i];
      kern_.axpy(&moe_bias_[size_t(b) * dim], c.weight, L.down_exps_bias[c.expert].data(), dim);
    }
}

// y += bias (the local heads' part); nothing when the layer has no bias.
void ModelForward::add_bias(float* y, const std::vector<float>& bias) {
  for (size_t i = 0; i < bias.size(); ++i) y[i] += bias[i];
}

// Each head of x scaled by its own RMS and the weight shared by all heads (qwen3's q/k norm, the
// model's epsilon); nothing when the layer has no such weight.
void ModelForward::norm_heads(float* x, int n_heads, const std::vector<float>& w) const {
  if (w.empty()) return;
  const int64_t hd = config_.head_dim;
  for (int h = 0; h < n_heads; ++h) kern_.rmsnorm(x + h * hd, x + h * hd, w.data(), hd, config_.rms_eps);
}

void ModelForward::add_to_residual(const Batch& batch, const std::string& what, const std::vector<float>& once,
                                   int64_t once_stride) {
  const int B = batch.size();
  const int64_t dim = config_.dim;
  check_finite(delta_.data(), size_t(B * dim), size_t(dim), batch.positions, what);
  sync_.reduce_sum(delta_.data(), B, dim);
  if (!once.empty())
    for (int b = 0; b < B; ++b)
      for (int64_t i = 0; i < dim; ++i) delta_[b * dim + i] += once[size_t(b * once_stride + i)];
  for (int64_t i = 0; i < B * dim; ++i) x_[i] += delta_[i];
}

}  // namespace r1pi
