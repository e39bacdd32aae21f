// Keys and values of every position seen so far, for this rank's KV heads only, as F32 (the exact
// path, the default) or F16 (--kv-type f16: half the bytes that attention reads per position).
//
// Each head's positions lie one after the other ([layer][head][position][head_dim]): attention
// reads a head's keys (then values) for positions 0 .. pos as one sequential run, which the
// hardware prefetchers follow, instead of head_dim floats every kv_dim floats.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ggml/ggml_type.h"

namespace r1pi {

class KvCache {
 public:
  // type: F32 or F16 (anything else is refused with Error).
  KvCache(int n_layers, int n_ctx, int n_heads, int head_dim, GgmlType type = GgmlType::F32);
  int n_ctx() const { return n_ctx_; }
  int head_dim() const { return head_dim_; }
  GgmlType type() const { return type_; }
  // Bytes of one position's key (or value) of one head; position pos + 1's follows it.
  size_t row_bytes() const { return row_bytes_; }
  // Head `head`'s key (value) row at position pos.
  const uint8_t* key(int layer, int head, int pos) const { return keys_.data() + offset(layer, head, pos); }
  const uint8_t* value(int layer, int head, int pos) const { return values_.data() + offset(layer, head, pos); }
  // Stores one position's keys and values, n_heads * head_dim floats each, heads one after
  // another, converted to the cache's type (F16: round to nearest even).
  void store(int layer, int pos, const float* keys, const float* values);
  uint64_t bytes() const { return keys_.size() + values_.size(); }

 private:
  size_t offset(int layer, int head, int pos) const {
    return ((size_t(layer) * n_heads_ + head) * n_ctx_ + pos) * row_bytes_;
  }
  int n_ctx_, n_heads_, head_dim_;
  GgmlType type_;
  size_t row_bytes_;
  std::vector<uint8_t> keys_, values_;
};

}  // namespace r1pi
