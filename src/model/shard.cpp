#include "model/shard.h"

#include <string>

#include "common/error.h"
#include "model/model_config.h"

namespace r1pi {

Range split_evenly(uint32_t count, int parts, int index) {
  const uint32_t base = count / uint32_t(parts), extra = count % uint32_t(parts);
  const uint32_t i = uint32_t(index);
  const uint32_t begin = i * base + (i < extra ? i : extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

Shard Shard::for_rank(const ModelConfig& config, int rank, int n_ranks) {
  const uint32_t ffn_block = config.ffn_block;
  if (n_ranks < 1 || rank < 0 || rank >= n_ranks)
    throw Error("rank " + std::to_string(rank) + " of " + std::to_string(n_ranks) + " is not valid");
  if (uint32_t(n_ranks) > config.n_kv_heads)
    throw Error("cannot split the model over " + std::to_string(n_ranks) + " ranks: it has only " +
                std::to_string(config.n_kv_heads) + " KV heads (use at most " +
                std::to_string(config.n_kv_heads) + " ranks)");
  if (ffn_block == 0 || config.ffn_dim % ffn_block != 0 || config.ffn_dim / ffn_block < uint32_t(n_ranks))
    throw Error("cannot split the FFN of " + std::to_string(config.ffn_dim) + " units over " +
                std::to_string(n_ranks) + " ranks in blocks of " + std::to_string(ffn_block));
  Shard s;
  s.kv_heads = split_evenly(config.n_kv_heads, n_ranks, rank);
  const Range blocks = split_evenly(config.ffn_dim / ffn_block, n_ranks, rank);
  s.ffn = {blocks.begin * ffn_block, blocks.end * ffn_block};
  s.vocab = split_evenly(config.n_vocab, n_ranks, rank);
  return s;
}

}  // namespace r1pi
