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
  Shard s;
  s.kv_heads = split_evenly(config.n_kv_heads, n_ranks, rank);
  s.vocab = split_evenly(config.n_vocab, n_ranks, rank);
  if (config.n_experts > 0) {  // every layer's FFN is a mixture of experts: no dense FFN to split
    s.expert_units = expert_split(config, rank, n_ranks);
    return s;
  }
  if (ffn_block == 0 || config.ffn_dim % ffn_block != 0 || config.ffn_dim / ffn_block < uint32_t(n_ranks))
    throw Error("cannot split the FFN of " + std::to_string(config.ffn_dim) + " units over " +
                std::to_string(n_ranks) + " ranks in blocks of " + std::to_string(ffn_block));
  const Range blocks = split_evenly(config.ffn_dim / ffn_block, n_ranks, rank);
  s.ffn = {blocks.begin * ffn_block, blocks.end * ffn_block};
  return s;
}

std::vector<Range> expert_split(const ModelConfig& config, int rank, int n_ranks) {
  const uint32_t block = config.expert_block, units = config.expert_ffn_dim;
  const uint64_t blocks = block && units % block == 0 ? uint64_t(units / block) * config.n_experts : 0;
  if (blocks < uint64_t(n_ranks))
    throw Error("cannot split ffn_down_exps (" + std::to_string(config.n_experts) + " experts of " +
                std::to_string(units) + " units, blocks of " + std::to_string(block) + ") over " +
                std::to_string(n_ranks) + " ranks: use at most " + std::to_string(blocks) + " ranks");
  // Expert e's blocks in n_ranks contiguous parts (split_evenly: the first parts one block
  // longer); rank r takes part (r - e) mod n_ranks, so the longer parts rotate over the ranks.
  std::vector<Range> held(config.n_experts);
  for (uint32_t e = 0; e < config.n_experts; ++e) {
    const int part = int((uint32_t(rank) + uint32_t(n_ranks) - e % uint32_t(n_ranks)) % uint32_t(n_ranks));
    const Range r = split_evenly(units / block, n_ranks, part);
    held[e] = {r.begin * block, r.end * block};
  }
  return held;
}

}  // namespace r1pi
