// Keys and values of every position seen so far, for this rank's KV heads only (F32).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace r1pi {

class KvCache {
 public:
  KvCache(int n_layers, int n_ctx, int kv_dim)
      : n_ctx_(n_ctx), kv_dim_(kv_dim),
        k_(size_t(n_layers) * n_ctx * kv_dim), v_(size_t(n_layers) * n_ctx * kv_dim) {}
  int n_ctx() const { return n_ctx_; }
  int kv_dim() const { return kv_dim_; }
  float* key(int layer, int pos) { return k_.data() + (size_t(layer) * n_ctx_ + pos) * kv_dim_; }
  float* value(int layer, int pos) { return v_.data() + (size_t(layer) * n_ctx_ + pos) * kv_dim_; }
  uint64_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

 private:
  int n_ctx_, kv_dim_;
  std::vector<float> k_, v_;
};

}  // namespace r1pi
