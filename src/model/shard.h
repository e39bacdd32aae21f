// Which part of every layer one rank holds. With one rank the shard is the whole model; the
// layer code only ever sees local sizes, so it does not care how many shards exist.
#pragma once
#include <cstdint>

namespace r1pi {

struct LlamaConfig;

struct Range {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
};

struct Shard {
  Range kv_heads;   // KV heads held (with their query heads, the rows of wq/wk/wv, columns of wo)
  Range ffn;        // hidden units of the FFN (rows of w1/w3, columns of w2)
  Range vocab;      // rows of the output matrix

  static Shard whole(const LlamaConfig& config);
};

}  // namespace r1pi
