// Which part of every layer one rank holds. With one rank the shard is the whole model; the
// layer code only ever sees local sizes, so it does not care how many shards exist.
#pragma once
#include <cstdint>

namespace r1pi {

struct ModelConfig;

struct Range {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
};

struct Shard {
  Range kv_heads;   // KV heads held (with their query heads, the rows of wq/wk/wv, columns of wo)
  Range ffn;        // hidden units of the FFN (rows of w1/w3, columns of w2)
  Range vocab;      // rows of the output matrix

  // Rank `rank` of n_ranks: contiguous ranges, balanced to within one KV head, one block of
  // config.ffn_block hidden units (so that every column-split FFN tensor splits on whole blocks)
  // and one vocabulary row. Any rank count from 1 to n_kv_heads works, powers of two or not; more
  // ranks than KV heads, or fewer FFN blocks than ranks, is an r1pi::Error.
  static Shard for_rank(const ModelConfig& config, int rank, int n_ranks);
};

// [begin, end) of part `index` when `count` units are split into `parts` contiguous parts whose
// sizes differ by at most one unit (the first count % parts parts get the extra unit).
Range split_evenly(uint32_t count, int parts, int index);

}  // namespace r1pi
