// Which part of every layer one rank holds. With one rank the shard is the whole model; the
// layer code only ever sees local sizes, so it does not care how many shards exist.
#pragma once
#include <cstdint>
#include <vector>

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
  // Mixture of experts: the hidden units held of each expert (rows of its gate and up, columns of
  // its down), whole blocks of config.expert_block. Every rank holds a contiguous part of every
  // expert, the parts balanced to within a block and the ranks that get the extra block rotating
  // with the expert, so that each rank holds ~1/N of each layer's experts and, when the blocks
  // divide among the ranks, computes 1/N of whatever experts the router picks. Empty when dense.
  std::vector<Range> expert_units;

  // Rank `rank` of n_ranks: contiguous ranges, balanced to within one KV head, one block of
  // config.ffn_block hidden units (so that every column-split FFN tensor splits on whole blocks)
  // and one vocabulary row; the experts' units as above. Any rank count from 1 to n_kv_heads
  // works, powers of two or not; more ranks than KV heads, fewer FFN blocks than ranks, or fewer
  // expert blocks in a layer than ranks, is an r1pi::Error.
  static Shard for_rank(const ModelConfig& config, int rank, int n_ranks);
};

// The units of each expert that rank `rank` of n_ranks holds (Shard::expert_units). Throws
// r1pi::Error, naming ffn_down_exps and the counts, when a layer has fewer blocks than ranks.
std::vector<Range> expert_split(const ModelConfig& config, int rank, int n_ranks);

// [begin, end) of part `index` when `count` units are split into `parts` contiguous parts whose
// sizes differ by at most one unit (the first count % parts parts get the extra unit).
Range split_evenly(uint32_t count, int parts, int index);

}  // namespace r1pi
