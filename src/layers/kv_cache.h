// Keys and values of every position seen so far, for this rank's KV heads only (F32).
//
// Each head's positions lie one after the other ([layer][head][position][head_dim]): attention
// reads a head's keys (then values) for positions 0 .. pos as one sequential run, which the
// hardware prefetchers follow, instead of head_dim floats every kv_dim floats.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace r1pi {

class KvCache {
 public:
  KvCache(int n_layers, int n_ctx, int n_heads, int head_dim)
      : n_ctx_(n_ctx), n_heads_(n_heads), head_dim_(head_dim),
        keys_(size_t(n_layers) * n_heads * n_ctx * head_dim),
        values_(size_t(n_layers) * n_heads * n_ctx * head_dim) {}
  int n_ctx() const { return n_ctx_; }
  // Head `head`'s key (value) at position pos: head_dim floats, position pos + 1's right after.
  const float* key(int layer, int head, int pos) const {
    return keys_.data() + offset(layer, head, pos);
  }
  const float* value(int layer, int head, int pos) const {
    return values_.data() + offset(layer, head, pos);
  }
  // Stores one position's keys and values, n_heads * head_dim floats each, heads one after another.
  void store(int layer, int pos, const float* keys, const float* values) {
    const size_t hd = size_t(head_dim_);
    for (int h = 0; h < n_heads_; ++h) {
      std::memcpy(keys_.data() + offset(layer, h, pos), keys + h * hd, sizeof(float) * hd);
      std::memcpy(values_.data() + offset(layer, h, pos), values + h * hd, sizeof(float) * hd);
    }
  }
  uint64_t bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }

 private:
  size_t offset(int layer, int head, int pos) const {
    return ((size_t(layer) * n_heads_ + head) * n_ctx_ + pos) * head_dim_;
  }
  int n_ctx_, n_heads_, head_dim_;
  std::vector<float> keys_, values_;
};

}  // namespace r1pi
