#include "layers/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "common/available_memory.h"
#include "common/error.h"
#include "ggml/fp16.h"
#include "ggml/quantize.h"
#include "layers/linear.h"

namespace r1pi {

namespace {

// "f32, f16, q8_0", for messages.
std::string listed_names() {
  std::string s;
  for (const std::string& name : kv_cache_type_names()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

size_t checked_row_bytes(GgmlType type, int head_dim) {
  kv_cache_type_row(type);
  if (type == GgmlType::Q8_0 && head_dim % QK8_0 != 0)
    throw Error("a q8_0 KV cache needs a head size that is a multiple of 32 (this model's: " +
                std::to_string(head_dim) + "); use f16 or f32");
  return ggml_row_bytes(type, uint64_t(head_dim));
}

int run_limit(int n_ctx, int max_run) { return max_run > 0 ? std::min(max_run, n_ctx) : n_ctx; }

// The positions each layer holds: a window layer's ring, n_ctx for the others.
std::vector<int> layer_positions(int n_layers, int n_ctx, const std::vector<int>& windows, int max_run) {
  std::vector<int> held(size_t(n_layers), n_ctx);
  for (size_t l = 0; l < windows.size() && l < held.size(); ++l)
    if (windows[l] > 0) held[l] = int(std::min<int64_t>(n_ctx, int64_t(windows[l]) + run_limit(n_ctx, max_run) - 1));
  return held;
}

}  // namespace

uint64_t KvCache::bytes_for(int n_layers, int n_ctx, int n_heads, int head_dim, GgmlType type, int n_seqs,
                            const std::vector<int>& windows, int max_run) {
  uint64_t positions = 0;
  for (int held : layer_positions(n_layers, n_ctx, windows, max_run)) positions += uint64_t(held);
  return 2 * positions * n_seqs * n_heads * ggml_row_bytes(type, uint64_t(head_dim));
}

KvCache::KvCache(int n_layers, int n_ctx, int n_heads, int head_dim, GgmlType type, int n_seqs,
                 const std::vector<int>& windows, int max_run)
    : n_layers_(n_layers), n_ctx_(n_ctx), n_heads_(n_heads), head_dim_(head_dim), n_seqs_(n_seqs),
      max_run_(run_limit(n_ctx, max_run)), type_(type), row_bytes_(checked_row_bytes(type, head_dim)),
      positions_(layer_positions(n_layers, n_ctx, windows, max_run)), tokens_(size_t(n_seqs)) {
  // Without a ring a forward may store any run, and a slot continue anywhere.
  if (std::ranges::none_of(positions_, [&](int held) { return held < n_ctx; })) max_run_ = n_ctx;
  double positions = 0;
  for (int l = 0; l < n_layers; ++l) {
    layer_start_.push_back(size_t(positions) * size_t(n_seqs) * size_t(n_heads) * row_bytes_);
    positions += positions_[size_t(l)];
  }
  // In double: a context of 2^24 on a large model overflows nothing there, and the message can say
  // how much was asked for. The cache is checked against the memory available now (what is free
  // and what the kernel can reclaim), not the machine's total: a cache past it would fill up into
  // the OOM killer thousands of tokens into a run. A refused mapping is reported the same way.
  const double bytes = 2.0 * double(row_bytes_) * positions * n_seqs * n_heads;
  const double available = double(available_memory_bytes());
  auto too_big = [&](const std::string& why) {
    char gb[64];
    std::snprintf(gb, sizeof gb, "%.1f GB", bytes / 1e9);
    throw Error("the KV cache for a context of " + std::to_string(n_ctx) + " tokens would take " + gb + " (" +
                std::string(ggml_type_name(type)) + " keys and values, " + std::to_string(n_layers) + " layers x " +
                std::to_string(n_heads) + " KV heads x " + std::to_string(head_dim) +
                (n_seqs > 1 ? " x " + std::to_string(n_seqs) + " slots" : "") + "), " + why +
                ": lower -c/--ctx-size" + (type == GgmlType::Q8_0 ? "" : " or use a smaller --kv-type (f16, q8_0)"));
  };
  if ((available > 0 && bytes > available) || bytes >= 0x1p62) {
    char have[64];
    std::snprintf(have, sizeof have, "%.1f GB", available / 1e9);
    too_big(std::string("more than the ") + have + " of memory available on this machine");
  }
  const size_t n = size_t(bytes / 2);
  try {
    keys_ = HugeBuffer(n);
    values_ = HugeBuffer(n);
  } catch (const std::bad_alloc&) {
    too_big("more memory than the system grants");
  }
  // Not written here: the mapping reads as zeros, and a position's page is taken when a forward
  // first stores that position (every position is stored before attention reads it). A run of a
  // few tokens with -c 1000000 holds a few MB of cache, not all of it; a long run grows as it goes.
}

namespace {

// A key or value past what the cache's type holds used to be stored as inf: the attention then
// made NaN of it, reported as NaN weights, or lost it. Named here, where the layer is known.
[[noreturn]] void throw_past_cache_type(GgmlType type, int layer, int pos, const char* what, const float* x,
                                        size_t n) {
  float amax = 0;
  for (size_t i = 0; i < n; ++i) amax = std::isnan(x[i]) || std::isnan(amax) ? NAN : std::max(amax, std::fabs(x[i]));
  char value[32];
  std::snprintf(value, sizeof value, "%g", amax);
  const std::string where = "layer " + std::to_string(layer) + ": a " + what + " at position " + std::to_string(pos) +
                            " holds " + value;
  if (!std::isfinite(amax))
    throw Error(where + ": the model's weights hold NaN or inf values (a damaged or badly converted file)");
  const bool q8 = type == GgmlType::Q8_0;
  throw Error(where + ", past the largest value a" + (q8 ? " q8_0" : "n f16") + " KV cache holds (" +
              (q8 ? "127 x 65504, about 8.3e6" : "65504") +
              "): the model's weights are far out of range (--kv-type f32 holds it)");
}

}  // namespace

void KvCache::store(int layer, int seq, int pos, const float* keys, const float* values) {
  const size_t hd = size_t(head_dim_);
  for (int h = 0; h < n_heads_; ++h) {
    uint8_t* k = keys_.data() + offset(layer, seq, h, pos);
    uint8_t* v = values_.data() + offset(layer, seq, h, pos);
    if (type_ == GgmlType::F32) {
      std::memcpy(k, keys + h * hd, sizeof(float) * hd);
      std::memcpy(v, values + h * hd, sizeof(float) * hd);
      continue;
    }
    if (type_ == GgmlType::Q8_0) {
      auto* kq = reinterpret_cast<block_q8_0*>(k);
      auto* vq = reinterpret_cast<block_q8_0*>(v);
      quantize_row_q8_0_ref(keys + h * hd, kq, int64_t(hd));
      quantize_row_q8_0_ref(values + h * hd, vq, int64_t(hd));
      for (size_t b = 0; b < hd / QK8_0; ++b) {
        if (q8_0_scale_overflows(kq[b])) throw_past_cache_type(type_, layer, pos, "key", keys + h * hd, hd);
        if (q8_0_scale_overflows(vq[b])) throw_past_cache_type(type_, layer, pos, "value", values + h * hd, hd);
      }
      continue;
    }
    bool k_past = false, v_past = false;  // an inf or NaN half has every exponent bit set
    for (size_t i = 0; i < hd; ++i) {
      const uint16_t kh = fp32_to_fp16(keys[h * hd + i]), vh = fp32_to_fp16(values[h * hd + i]);
      std::memcpy(k + 2 * i, &kh, 2);
      std::memcpy(v + 2 * i, &vh, 2);
      k_past |= (kh & 0x7c00) == 0x7c00;
      v_past |= (vh & 0x7c00) == 0x7c00;
    }
    if (k_past) throw_past_cache_type(type_, layer, pos, "key", keys + h * hd, hd);
    if (v_past) throw_past_cache_type(type_, layer, pos, "value", values + h * hd, hd);
  }
}

void KvCache::truncate(int seq, int n) {
  std::vector<int32_t>& held = tokens_[size_t(seq)];
  if (size_t(n) < held.size()) held.resize(size_t(n));
}

void KvCache::copy(int src, int dst) {
  if (src == dst) return;
  for (int l = 0; l < n_layers_; ++l) {
    // A ring's positions stand where they stand in the source's ring: all of it, once it is full.
    const size_t n = std::min(tokens_[size_t(src)].size(), size_t(positions_[size_t(l)]));
    for (int h = 0; h < n_heads_; ++h) {
      std::memcpy(keys_.data() + offset(l, dst, h, 0), keys_.data() + offset(l, src, h, 0), n * row_bytes_);
      std::memcpy(values_.data() + offset(l, dst, h, 0), values_.data() + offset(l, src, h, 0), n * row_bytes_);
    }
  }
  tokens_[size_t(dst)] = tokens_[size_t(src)];
}

const KvCacheType& kv_cache_type_named(const std::string& name) {
  for (const KvCacheType& t : kKvCacheTypes)
    if (name == t.name) return t;
  throw Error("--kv-type " + name + ": unknown cache type (" + listed_names() + ")");
}

const KvCacheType& kv_cache_type_row(GgmlType type) {
  for (const KvCacheType& t : kKvCacheTypes)
    if (type == t.type) return t;
  throw Error("KV cache type " + std::string(ggml_type_name(type)) + " is not supported (" + listed_names() + ")");
}

GgmlType kv_cache_type(const std::string& name) { return kv_cache_type_named(name).type; }

std::vector<std::string> kv_cache_type_names() {
  std::vector<std::string> names;
  for (const KvCacheType& t : kKvCacheTypes) names.push_back(t.name);
  return names;
}

}  // namespace r1pi
