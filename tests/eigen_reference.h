// An independent forward pass of the decoders r1pi runs (llama, qwen2, qwen3, qwen3moe, gpt-oss)
// for the tests, in double precision with Eigen. gpt-oss's parts (sinks, sliding window, YaRN,
// the router's bias and top-k-then-softmax, expert biases, the clamped SwiGLU) are written from
// shared/data/gptoss/ARCH_FACTS.md section 4.
//
// It shares nothing with r1pi's engine but the GGUF reader and dequantize_row (both tested on their
// own): the hyper-parameters come straight from the metadata keys (written out here, not read
// through r1pi's architecture rows), the optional parts from the tensors present, the RoPE factors from the
// rope_freqs.weight tensor, every weight is dequantised to float and widened to double, and all
// activations stay in double with NO activation quantisation. Besides the logits it records, at
// every point where r1pi quantises activations (or merely rounds to float), the relative noise
// energy that this introduces, from which the tests derive their error bound (see
// test_reference_forward.cpp for the derivation).
#pragma once
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "ggml/ggml_type.h"
#include "ggml/quantize.h"

namespace r1pi::ref {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

inline constexpr double kU = 0x1p-24;  // float32 unit roundoff

// A weight matrix rows x cols (y = W x), dequantised; type is the file's type.
struct Weight {
  Mat w;
  Mat abs_w;  // |W|, for the float accumulation estimate
  GgmlType type = GgmlType::F32;
  bool quantised_input() const {
    return type == GgmlType::Q4_0 || type == GgmlType::Q8_0 || type == GgmlType::Q6_K || type == GgmlType::MXFP4;
  }
};

struct Layer {
  Vec attn_norm, ffn_norm;
  Weight wq, wk, wv, wo, w1, w2, w3;
  Vec bq, bk, bv;        // qwen2's biases (size 0: none)
  Vec q_norm, k_norm;    // qwen3's per-head norms (size 0: none)
  Vec bo, sinks;         // gpt-oss's output bias and per-head sinks (size 0: none)
  // qwen3moe: the router (n_experts x dim) and each expert's gate, up, down (w1/w2/w3 unused).
  Weight router;
  std::vector<Weight> gate_exps, up_exps, down_exps;
  // gpt-oss: the router's bias and each expert's biases (empty: none).
  Vec router_bias;
  std::vector<Vec> gate_bias, up_bias, down_bias;
};

// Deliberate mistakes, for the negative controls: a correct bound must reject each of them.
enum class RopeMode { Adjacent, RotateHalf, None };

struct Model {
  uint32_t dim = 0, n_layers = 0, ffn = 0, n_heads = 0, n_kv = 0, hd = 0, rope_dim = 0, n_vocab = 0;
  uint32_t n_experts = 0, n_experts_used = 0;  // qwen3moe's expert_count, expert_used_count
  double eps = 1e-5, rope_base = 10000;
  // gpt-oss: its window (in even layers), YaRN's factor and original context (0: none), and its
  // router taking the top k of the logits before the softmax.
  uint32_t window = 0;
  double yarn_factor = 0, yarn_original = 0;
  bool topk_then_softmax = false;
  bool swiglu_oai = false;
  RopeMode rope = RopeMode::Adjacent;  // llama's adjacent pairs; qwen2/qwen3 rotate halves
  std::vector<double> freq_factors;  // empty: none
  Weight embd;                       // n_vocab x dim
  std::vector<Layer> layers;
  Vec out_norm;
  Weight output;                     // n_vocab x dim (the embedding when tied)
  bool tied = false;
};

inline Weight read_weight(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) throw std::runtime_error("reference: missing tensor " + name);
  const int64_t cols = int64_t(t->ne[0]), rows = int64_t(t->rows());
  Weight w;
  w.type = t->type;
  w.w.resize(rows, cols);
  const size_t row_bytes = ggml_row_bytes(t->type, uint64_t(cols));
  std::vector<float> buf(cols);
  const uint8_t* data = f.tensor_data(*t);
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(t->type, data + size_t(r) * row_bytes, buf.data(), cols);
    for (int64_t c = 0; c < cols; ++c) w.w(r, c) = buf[c];
  }
  w.abs_w = w.w.cwiseAbs();
  return w;
}

// A 3-D expert tensor {cols, rows, experts}: one matrix per expert, expert e the e-th slab.
inline std::vector<Weight> read_experts(const GgufFile& f, const std::string& name, uint32_t n_experts) {
  const Weight all = read_weight(f, name);
  const int64_t rows = all.w.rows() / n_experts;
  std::vector<Weight> out(n_experts);
  for (uint32_t e = 0; e < n_experts; ++e) {
    out[e].type = all.type;
    out[e].w = all.w.middleRows(int64_t(e) * rows, rows);
    out[e].abs_w = out[e].w.cwiseAbs();
  }
  return out;
}

inline Vec read_vector(const GgufFile& f, const std::string& name) {
  Weight w = read_weight(f, name);
  return Eigen::Map<const Vec>(w.w.data(), w.w.size());
}

inline Model load(const std::string& path) {
  GgufFile f = GgufFile::open(path);
  Model m;
  const std::string arch = f.get_string("general.architecture");
  if (arch != "llama" && arch != "qwen2" && arch != "qwen3" && arch != "qwen3moe" && arch != "gpt-oss")
    throw std::runtime_error("reference: " + arch);
  const bool gpt_oss = arch == "gpt-oss";
  auto key = [&](const char* k) { return arch + "." + k; };
  m.rope = arch == "llama" ? RopeMode::Adjacent : RopeMode::RotateHalf;
  m.dim = f.get_u32(key("embedding_length"));
  m.n_layers = f.get_u32(key("block_count"));
  m.ffn = f.get_u32(key("feed_forward_length"));
  m.n_heads = f.get_u32(key("attention.head_count"));
  m.n_kv = f.has(key("attention.head_count_kv")) ? f.get_u32(key("attention.head_count_kv")) : m.n_heads;
  m.hd = f.has(key("attention.key_length")) ? f.get_u32(key("attention.key_length")) : m.dim / m.n_heads;
  m.rope_dim = f.has(key("rope.dimension_count")) ? f.get_u32(key("rope.dimension_count")) : m.hd;
  m.eps = f.try_f32(key("attention.layer_norm_rms_epsilon")).value_or(1e-5f);
  m.rope_base = f.try_f32(key("rope.freq_base")).value_or(10000.0f);
  if (arch == "qwen3moe" || gpt_oss) {
    m.n_experts = f.get_u32(key("expert_count"));
    m.n_experts_used = f.get_u32(key("expert_used_count"));
  }
  if (gpt_oss) {
    m.window = f.get_u32(key("attention.sliding_window"));
    m.topk_then_softmax = m.swiglu_oai = true;
  }
  if (f.try_string(key("rope.scaling.type")).value_or("") == "yarn") {
    m.yarn_factor = f.get_f32(key("rope.scaling.factor"));
    m.yarn_original = f.get_u32(key("rope.scaling.original_context_length"));
  }
  if (f.find_tensor("rope_freqs.weight")) {
    const Vec ff = read_vector(f, "rope_freqs.weight");
    m.freq_factors.assign(ff.data(), ff.data() + ff.size());
  }
  m.embd = read_weight(f, "token_embd.weight");
  m.n_vocab = uint32_t(m.embd.w.rows());
  for (uint32_t l = 0; l < m.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    Layer L;
    L.attn_norm = read_vector(f, p + "attn_norm.weight");
    L.wq = read_weight(f, p + "attn_q.weight");
    L.wk = read_weight(f, p + "attn_k.weight");
    L.wv = read_weight(f, p + "attn_v.weight");
    auto optional = [&](const std::string& name) { return f.find_tensor(name) ? read_vector(f, name) : Vec(); };
    L.bq = optional(p + "attn_q.bias");
    L.bk = optional(p + "attn_k.bias");
    L.bv = optional(p + "attn_v.bias");
    L.q_norm = optional(p + "attn_q_norm.weight");
    L.k_norm = optional(p + "attn_k_norm.weight");
    L.wo = read_weight(f, p + "attn_output.weight");
    L.bo = optional(p + "attn_output.bias");
    L.sinks = optional(p + "attn_sinks.weight");
    L.ffn_norm = read_vector(f, p + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"));
    if (m.n_experts) {
      L.router = read_weight(f, p + "ffn_gate_inp.weight");
      L.router_bias = optional(p + "ffn_gate_inp.bias");
      L.gate_exps = read_experts(f, p + "ffn_gate_exps.weight", m.n_experts);
      L.up_exps = read_experts(f, p + "ffn_up_exps.weight", m.n_experts);
      L.down_exps = read_experts(f, p + "ffn_down_exps.weight", m.n_experts);
      // A 2-D bias {units, experts}: expert e's the e-th row.
      auto biases = [&](const std::string& name) {
        std::vector<Vec> out;
        if (!f.find_tensor(name)) return out;
        const Weight all = read_weight(f, name);
        for (uint32_t e = 0; e < m.n_experts; ++e) out.push_back(all.w.row(e).transpose());
        return out;
      };
      L.gate_bias = biases(p + "ffn_gate_exps.bias");
      L.up_bias = biases(p + "ffn_up_exps.bias");
      L.down_bias = biases(p + "ffn_down_exps.bias");
    } else {
      L.w1 = read_weight(f, p + "ffn_gate.weight");
      L.w3 = read_weight(f, p + "ffn_up.weight");
      L.w2 = read_weight(f, p + "ffn_down.weight");
    }
    m.layers.push_back(std::move(L));
  }
  m.out_norm = read_vector(f, "output_norm.weight");
  m.tied = f.find_tensor("output.weight") == nullptr;
  m.output = m.tied ? m.embd : read_weight(f, "output.weight");
  return m;
}

struct Options {
  std::optional<RopeMode> rope;   // another layout than the model's
  bool ignore_freq_factors = false;
  bool gqa_modulo = false;        // KV head h % n_kv instead of h / group
  double position_scale = 1.0;    // theta uses pos * position_scale
  bool ignore_biases = false;     // qwen2's q/k/v biases left out (gpt-oss's all)
  bool ignore_qk_norm = false;    // qwen3's per-head norms left out
  bool unnormalised_experts = false;  // qwen3moe's expert weights not divided by their sum
  int fewer_experts = 0;          // qwen3moe: this many fewer experts per token
  bool ignore_window = false;     // gpt-oss: every layer sees every position
  bool ignore_sinks = false;      // gpt-oss: no sink column
  bool ignore_yarn = false;       // gpt-oss: plain RoPE frequencies, no YaRN scale
  bool plain_silu = false;        // gpt-oss: the experts' silu(g) * u, without clamps or its "+ 1"
};

struct Result {
  Mat logits;  // T x n_vocab
  // Per quantisation/rounding point k and position t: relative noise energy of r1pi's
  // computation at that point (Q8_0 activation noise + float accumulation estimate).
  std::vector<std::vector<double>> eps2_q, eps2_f;
  // Per position: E_t = sum_k max_{t' <= t} (eps2_q + eps2_f)[k][t'] (causal: a position sees
  // the keys and values of every earlier one).
  std::vector<double> energy;
  // qwen3moe: the smallest gap, over tokens and layers, between the router logits of the last
  // expert chosen and the first not chosen (a near-tie r1pi's rounding could flip).
  double min_router_gap = std::numeric_limits<double>::infinity();
};

// Relative Q8_0 noise energy of one activation row (see test_reference_forward.cpp):
//   sum_blocks 32 * (s_b^2 / 12) / sum x^2, s_b = amax_b / 127, plus 2^-22 for the fp16 scale.
inline double q8_noise_energy(const Vec& x) {
  double noise = 0, signal = x.squaredNorm();
  for (int64_t b = 0; b + 32 <= x.size(); b += 32) {
    const double s = x.segment(b, 32).cwiseAbs().maxCoeff() / 127.0;
    noise += 32.0 * s * s / 12.0;
  }
  return signal > 0 ? noise / signal + 0x1p-22 : 0.0;
}

// Float rounding noise estimate of y = W x in r1pi (8 fma accumulators over n/8 terms, reduce8):
// per output, a random walk of (n/8 + 3) roundings of at most u * sum_j |W_ij x_j| each:
//   energy = (n/8 + 3) u^2 sum_i (|W||x|)_i^2 / sum_i y_i^2, plus 16 u^2 for the element-wise ops
// (rmsnorm, rope with float tables, exp polynomial of a few ulp, silu, softmax).
inline double float_noise_energy(const Weight& w, const Vec& x, const Vec& y) {
  const double n = double(w.w.cols());
  const Vec ax = w.abs_w * x.cwiseAbs();
  const double signal = y.squaredNorm();
  if (signal == 0) return 0;
  return (n / 8 + 3) * kU * kU * ax.squaredNorm() / signal + 16 * kU * kU;
}

inline Vec rmsnorm(const Vec& x, const Vec& w, double eps) {
  const double ms = x.squaredNorm() / double(x.size());
  return (x / std::sqrt(ms + eps)).cwiseProduct(w);
}

inline Result forward(const Model& m, const std::vector<int32_t>& tokens, const Options& o = {}) {
  const int T = int(tokens.size());
  const int group = int(m.n_heads / m.n_kv);
  Result r;
  // Points: per layer (qkv input, wo input, w1/w3 input, w2 input), then the logits input.
  const int n_points = int(m.n_layers) * 4 + 1;
  r.eps2_q.assign(n_points, std::vector<double>(T, 0.0));
  r.eps2_f.assign(n_points, std::vector<double>(T, 0.0));

  // Records the noise of one matmul input and returns the products for every weight given.
  auto point = [&](int k, int t, const Vec& x, std::initializer_list<const Weight*> ws,
                   std::initializer_list<Vec*> ys) {
    auto y = ys.begin();
    bool quantised = false;
    for (const Weight* w : ws) {
      **y = w->w * x;
      r.eps2_f[k][t] += float_noise_energy(*w, x, **y);
      quantised = quantised || w->quantised_input();
      ++y;
    }
    if (quantised) r.eps2_q[k][t] = q8_noise_energy(x);
  };

  // inverse frequencies
  const int pairs = int(m.rope_dim / 2);
  std::vector<double> inv_freq(pairs);
  for (int i = 0; i < pairs; ++i) {
    inv_freq[i] = std::pow(m.rope_base, -2.0 * i / double(m.rope_dim));
    if (!m.freq_factors.empty() && !o.ignore_freq_factors) inv_freq[i] /= m.freq_factors[i];
  }
  // YaRN (ARCH_FACTS.md 4.1): corr(beta) = d ln(orig / (2 pi beta)) / (2 ln base); low =
  // floor(corr(32)), high = ceil(corr(1)); pair j's angle mixes theta / factor and theta with
  // ramp = 1 - clamp((j - low) / (high - low), 0, 1); cos and sin times 1 + 0.1 ln factor.
  double mscale = 1;
  if (m.yarn_factor > 0 && !o.ignore_yarn) {
    auto corr = [&](double beta) {
      return double(m.rope_dim) * std::log(m.yarn_original / (2 * 3.14159265358979323846 * beta)) / (2 * std::log(m.rope_base));
    };
    const double low = std::max(0.0, std::floor(corr(32))), high = std::min(double(m.rope_dim) - 1, std::ceil(corr(1)));
    for (int j = 0; j < pairs; ++j) {
      const double ramp = 1 - std::clamp((j - low) / std::max(0.001, high - low), 0.0, 1.0);
      inv_freq[j] = inv_freq[j] / m.yarn_factor * (1 - ramp) + inv_freq[j] * ramp;
    }
    mscale = 1 + 0.1 * std::log(m.yarn_factor);
  }
  const RopeMode rope_mode = o.rope.value_or(m.rope);
  auto rope = [&](Vec& v, int n_heads, int pos) {
    if (rope_mode == RopeMode::None) return;
    for (int h = 0; h < n_heads; ++h) {
      double* x = v.data() + size_t(h) * m.hd;
      for (int i = 0; i < pairs; ++i) {
        const double th = pos * o.position_scale * inv_freq[i];
        const double c = std::cos(th) * mscale, s = std::sin(th) * mscale;
        const int a = rope_mode == RopeMode::Adjacent ? 2 * i : i;
        const int b = rope_mode == RopeMode::Adjacent ? 2 * i + 1 : i + int(m.hd) / 2;
        const double x0 = x[a], x1 = x[b];
        x[a] = x0 * c - x1 * s;
        x[b] = x0 * s + x1 * c;
      }
    }
  };

  // RMSNorm of each head with the weight all heads share (qwen3).
  auto norm_heads = [&](Vec& v, const Vec& w) {
    if (w.size() == 0) return;
    for (int64_t h = 0; h < v.size() / int64_t(m.hd); ++h) v.segment(h * m.hd, m.hd) = rmsnorm(v.segment(h * m.hd, m.hd), w, m.eps);
  };

  // qwen3moe: softmax over all the router's logits, the top n_experts_used (ties to the lower
  // index), their probabilities over their sum as weights, the weighted sum of the chosen experts'
  // gated FFNs. Noise: every chosen expert's input is xb (point k0 + 2), each its own activations
  // (point k0 + 3: the largest of the chosen experts' noise energies, since the outputs of random
  // experts add up with their energies).
  auto moe = [&](const Layer& L, const Vec& xb, int k0, int t) {
    Vec logits = L.router.w * xb;
    if (L.router_bias.size() && !o.ignore_biases) logits += L.router_bias;
    std::vector<int> order(m.n_experts);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    const int k = int(m.n_experts_used) - o.fewer_experts;
    if (k < int(m.n_experts))
      r.min_router_gap = std::min(r.min_router_gap, logits[order[size_t(k - 1)]] - logits[order[size_t(k)]]);
    // qwen3moe: the softmax over all, the k largest over their sum; gpt-oss: the softmax over the
    // k (the same in exact arithmetic).
    Vec p = Vec::Zero(m.n_experts);
    if (m.topk_then_softmax) {
      const double top = logits[order[0]];
      for (int i = 0; i < k; ++i) p[order[size_t(i)]] = std::exp(logits[order[size_t(i)]] - top);
    } else {
      p = (logits.array() - logits.maxCoeff()).exp().matrix();
    }
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += p[order[size_t(i)]];
    if (o.unnormalised_experts) sum = 1;
    Vec out = Vec::Zero(xb.size());
    if (L.gate_exps[0].quantised_input() || L.up_exps[0].quantised_input()) r.eps2_q[k0 + 2][t] = q8_noise_energy(xb);
    for (int i = 0; i < k; ++i) {
      const int e = order[size_t(i)];
      Vec g = L.gate_exps[e].w * xb, u = L.up_exps[e].w * xb;
      r.eps2_f[k0 + 2][t] = std::max(r.eps2_f[k0 + 2][t], float_noise_energy(L.gate_exps[e], xb, g) +
                                                             float_noise_energy(L.up_exps[e], xb, u));
      if (!L.gate_bias.empty() && !o.ignore_biases) {
        g += L.gate_bias[size_t(e)];
        u += L.up_bias[size_t(e)];
      }
      Vec h;
      if (m.swiglu_oai && !o.plain_silu) {  // gate clamped above at 7, up to [-7, 7]; g sigmoid(1.702 g) (u + 1)
        const Eigen::ArrayXd gc = g.array().min(7.0), uc = u.array().max(-7.0).min(7.0);
        h = (gc / (1.0 + (-1.702 * gc).exp()) * (uc + 1.0)).matrix();
      } else {
        h = (g.array() / (1.0 + (-g.array()).exp()) * u.array()).matrix();
      }
      Vec y = L.down_exps[e].w * h;
      if (L.down_exps[e].quantised_input()) r.eps2_q[k0 + 3][t] = std::max(r.eps2_q[k0 + 3][t], q8_noise_energy(h));
      r.eps2_f[k0 + 3][t] = std::max(r.eps2_f[k0 + 3][t], float_noise_energy(L.down_exps[e], h, y));
      if (!L.down_bias.empty() && !o.ignore_biases) y += L.down_bias[size_t(e)];
      out += (p[e] / sum) * y;
    }
    return out;
  };

  std::vector<Vec> X(T);
  for (int t = 0; t < T; ++t) X[t] = m.embd.w.row(tokens[t]).transpose();

  for (uint32_t l = 0; l < m.n_layers; ++l) {
    const Layer& L = m.layers[l];
    const int k0 = int(l) * 4;
    std::vector<Vec> Q(T), K(T), V(T);
    for (int t = 0; t < T; ++t) {
      const Vec xb = rmsnorm(X[t], L.attn_norm, m.eps);
      point(k0, t, xb, {&L.wq, &L.wk, &L.wv}, {&Q[t], &K[t], &V[t]});
      if (L.bq.size() && !o.ignore_biases) Q[t] += L.bq;
      if (L.bk.size() && !o.ignore_biases) K[t] += L.bk;
      if (L.bv.size() && !o.ignore_biases) V[t] += L.bv;
      if (!o.ignore_qk_norm) {
        norm_heads(Q[t], L.q_norm);
        norm_heads(K[t], L.k_norm);
      }
      rope(Q[t], int(m.n_heads), t);
      rope(K[t], int(m.n_kv), t);
    }
    for (int t = 0; t < T; ++t) {
      Vec att = Vec::Zero(int64_t(m.n_heads) * m.hd);
      // gpt-oss: even layers see positions t - window + 1 .. t; a sink column per head.
      const int first = m.window && l % 2 == 0 && !o.ignore_window ? std::max(0, t - int(m.window) + 1) : 0;
      const bool sink = L.sinks.size() && !o.ignore_sinks;
      for (int h = 0; h < int(m.n_heads); ++h) {
        const int kvh = o.gqa_modulo ? h % int(m.n_kv) : h / group;
        const auto q = Q[t].segment(size_t(h) * m.hd, m.hd);
        Vec s = Vec::Constant(t + 1, -std::numeric_limits<double>::infinity());
        for (int u = first; u <= t; ++u)
          s[u] = q.dot(K[u].segment(size_t(kvh) * m.hd, m.hd)) / std::sqrt(double(m.hd));
        const double mx = sink ? std::max(s.maxCoeff(), L.sinks[h]) : s.maxCoeff();
        s = (s.array() - mx).exp();
        s /= s.sum() + (sink ? std::exp(L.sinks[h] - mx) : 0.0);
        for (int u = first; u <= t; ++u)
          att.segment(size_t(h) * m.hd, m.hd) += s[u] * V[u].segment(size_t(kvh) * m.hd, m.hd);
      }
      Vec delta;
      point(k0 + 1, t, att, {&L.wo}, {&delta});
      if (L.bo.size() && !o.ignore_biases) delta += L.bo;
      X[t] += delta;
    }
    for (int t = 0; t < T; ++t) {
      if (m.n_experts) {
        X[t] += moe(L, rmsnorm(X[t], L.ffn_norm, m.eps), k0, t);
        continue;
      }
      const Vec xb = rmsnorm(X[t], L.ffn_norm, m.eps);
      Vec g, u;
      point(k0 + 2, t, xb, {&L.w1, &L.w3}, {&g, &u});
      const Vec hsw = (g.array() / (1.0 + (-g.array()).exp()) * u.array()).matrix();
      Vec delta;
      point(k0 + 3, t, hsw, {&L.w2}, {&delta});
      X[t] += delta;
    }
  }
  r.logits.resize(T, m.n_vocab);
  for (int t = 0; t < T; ++t) {
    const Vec xb = rmsnorm(X[t], m.out_norm, m.eps);
    Vec y;
    point(n_points - 1, t, xb, {&m.output}, {&y});
    r.logits.row(t) = y.transpose();
  }
  r.energy.assign(T, 0.0);
  for (int k = 0; k < n_points; ++k) {
    double run = 0;
    for (int t = 0; t < T; ++t) {
      run = std::max(run, r.eps2_q[k][t] + r.eps2_f[k][t]);
      r.energy[t] += run;
    }
  }
  return r;
}

}  // namespace r1pi::ref
