// Which part of every layer one rank holds. With one rank the shard is the whole model; the
// layer code only ever sees local sizes, so it does not care how many shards exist.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

struct ModelConfig;

// Each rank's share of every split (--shard-weights): one positive weight per rank; empty: equal.
using ShardWeights = std::vector<double>;

struct Range {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
};

struct Shard {
  Range kv_heads;   // KV heads held (the rows of wk/wv; their keys and values in this rank's cache)
  Range q_heads;    // query heads held (the rows of wq, columns of wo): those of the KV heads, or
                    // with more ranks than KV heads a part of one KV head's
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
  // works, powers of two or not. Beyond the KV heads, up to the query heads, the ranks share KV
  // heads: KV head k goes to split_evenly(n_ranks, n_kv_heads, k) ranks in a row, each of them
  // computing its keys and values and holding a contiguous part of its query heads (so every
  // rank holds exactly one KV head). More ranks than query heads, fewer FFN blocks than ranks, or
  // fewer expert blocks in a layer than ranks, is an r1pi::Error. With weights (one per rank) each
  // split's shares follow them instead (split_weighted; beyond the KV heads, the FFN's and the
  // vocabulary's).
  static Shard for_rank(const ModelConfig& config, int rank, int n_ranks, const ShardWeights& weights = {});
};

// The units of each expert that rank `rank` of n_ranks holds (Shard::expert_units). Throws
// r1pi::Error, naming ffn_down_exps and the counts, when a layer has fewer blocks than ranks.
// weights: each rank's share of every expert's blocks (--shard-weights; empty: equal).
std::vector<Range> expert_split(const ModelConfig& config, int rank, int n_ranks, const ShardWeights& weights = {});

// [begin, end) of part `index` when `count` units are split into `parts` contiguous parts whose
// sizes differ by at most one unit (the first count % parts parts get the extra unit).
Range split_evenly(uint32_t count, int parts, int index);
// Part `index` when `count` units are split into contiguous parts in proportion to `weights`: each
// part is its exact share rounded down, and the units left over go one each to the parts with the
// largest remainders (ties to the lower index), so every part is within one unit of its share;
// then, when count >= the parts, a part left empty takes a unit from the part furthest above its
// share (every rank must hold a head, a block and a row). Equal weights give split_evenly's parts.
Range split_weighted(uint32_t count, const ShardWeights& weights, int index);

// "2,1,1": the weights, one per rank, positive and finite; "" or "auto" are not parsed here.
// Throws r1pi::Error naming what is wrong (a weight of 0, a count other than n_ranks).
ShardWeights parse_shard_weights(const std::string& text, int n_ranks);
// "rank 0: KV heads 0-3, FFN units 0-7167, vocabulary 0-64127; rank 1: ..." for the banner.
std::string describe_plan(const ModelConfig& config, int n_ranks, const ShardWeights& weights);

}  // namespace r1pi
