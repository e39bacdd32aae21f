#include "model/shard.h"

#include <algorithm>
#include <cmath>
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

Range split_weighted(uint32_t count, const ShardWeights& weights, int index) {
  double total = 0;
  for (double w : weights) total += w;
  std::vector<uint32_t> size(weights.size());
  std::vector<std::pair<double, size_t>> remainder;  // (remainder, part)
  uint32_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = double(count) * weights[i] / total;
    size[i] = std::min(count - given, uint32_t(std::floor(exact)));
    given += size[i];
    remainder.push_back({exact - std::floor(exact), i});
  }
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < count; ++k, ++given) ++size[remainder[k % remainder.size()].second];
  // A part left empty (its share under one unit) takes a unit from the part furthest above its
  // share, when there are units enough: a rank without a head or block could not run its layers.
  for (size_t i = 0; i < size.size() && count >= size.size(); ++i) {
    if (size[i] > 0) continue;
    size_t from = 0;
    double surplus = -1e300;
    for (size_t j = 0; j < size.size(); ++j) {
      const double s = double(size[j]) - double(count) * weights[j] / total;
      if (size[j] > 1 && s > surplus) from = j, surplus = s;
    }
    --size[from];
    ++size[i];
  }
  uint32_t begin = 0;
  for (int i = 0; i < index; ++i) begin += size[size_t(i)];
  return {begin, begin + size[size_t(index)]};
}

ShardWeights parse_shard_weights(const std::string& text, int n_ranks) {
  ShardWeights weights;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    char* end = nullptr;
    const double w = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != 0 || !std::isfinite(w) || w <= 0)
      throw Error("--shard-weights " + text + ": '" + item + "' is not a positive number (one weight per rank, e.g. 2,1,1)");
    weights.push_back(w);
    at = comma + 1;
  }
  if (int(weights.size()) != n_ranks)
    throw Error("--shard-weights " + text + ": " + std::to_string(weights.size()) + " weights for " +
                std::to_string(n_ranks) + " ranks (give one per rank)");
  return weights;
}

namespace {
// A split of `count` units for rank `rank`: even, or by the weights.
Range split(uint32_t count, int rank, int n_ranks, const ShardWeights& weights) {
  return weights.empty() ? split_evenly(count, n_ranks, rank) : split_weighted(count, weights, rank);
}
}  // namespace

Shard Shard::for_rank(const ModelConfig& config, int rank, int n_ranks, const ShardWeights& weights) {
  const uint32_t ffn_block = config.ffn_block;
  if (n_ranks < 1 || rank < 0 || rank >= n_ranks)
    throw Error("rank " + std::to_string(rank) + " of " + std::to_string(n_ranks) + " is not valid");
  if (!weights.empty() && int(weights.size()) != n_ranks)
    throw Error("--shard-weights: " + std::to_string(weights.size()) + " weights for " + std::to_string(n_ranks) + " ranks");
  if (uint32_t(n_ranks) > config.n_heads)
    throw Error("cannot split the model over " + std::to_string(n_ranks) + " ranks: it has only " +
                std::to_string(config.n_heads) + " query heads (use at most " + std::to_string(config.n_heads) +
                " ranks)");
  Shard s;
  const uint32_t group = config.n_heads / config.n_kv_heads;
  if (uint32_t(n_ranks) <= config.n_kv_heads) {
    s.kv_heads = split(config.n_kv_heads, rank, n_ranks, weights);
    s.q_heads = {s.kv_heads.begin * group, s.kv_heads.end * group};
  } else {
    // The ranks of KV head k: split_evenly(n_ranks, n_kv_heads, k), a run of at most `group` ranks.
    for (uint32_t k = 0; k < config.n_kv_heads; ++k) {
      const Range ranks = split_evenly(uint32_t(n_ranks), int(config.n_kv_heads), int(k));
      if (uint32_t(rank) < ranks.begin || uint32_t(rank) >= ranks.end) continue;
      const Range part = split_evenly(group, int(ranks.size()), rank - int(ranks.begin));
      s.kv_heads = {k, k + 1};
      s.q_heads = {k * group + part.begin, k * group + part.end};
    }
  }
  s.vocab = split(config.n_vocab, rank, n_ranks, weights);
  if (config.n_experts > 0) {  // every layer's FFN is a mixture of experts: no dense FFN to split
    s.expert_units = expert_split(config, rank, n_ranks, weights);
    return s;
  }
  if (ffn_block == 0 || config.ffn_dim % ffn_block != 0 || config.ffn_dim / ffn_block < uint32_t(n_ranks))
    throw Error("cannot split the FFN of " + std::to_string(config.ffn_dim) + " units over " +
                std::to_string(n_ranks) + " ranks in blocks of " + std::to_string(ffn_block));
  const Range blocks = split(config.ffn_dim / ffn_block, rank, n_ranks, weights);
  s.ffn = {blocks.begin * ffn_block, blocks.end * ffn_block};
  return s;
}

std::vector<Range> expert_split(const ModelConfig& config, int rank, int n_ranks, const ShardWeights& weights) {
  const uint32_t block = config.expert_block, units = config.expert_ffn_dim;
  const uint64_t blocks = block && units % block == 0 ? uint64_t(units / block) * config.n_experts : 0;
  if (blocks < uint64_t(n_ranks))
    throw Error("cannot split ffn_down_exps (" + std::to_string(config.n_experts) + " experts of " +
                std::to_string(units) + " units, blocks of " + std::to_string(block) + ") over " +
                std::to_string(n_ranks) + " ranks: use at most " + std::to_string(blocks) + " ranks");
  // Expert e's blocks in n_ranks contiguous parts (split_evenly: the first parts one block
  // longer); rank r takes part (r - e) mod n_ranks, so the longer parts rotate over the ranks.
  // With weights each part is weighted by the weight of the rank that takes it.
  std::vector<Range> held(config.n_experts);
  ShardWeights rotated(weights.size());
  for (uint32_t e = 0; e < config.n_experts; ++e) {
    const int part = int((uint32_t(rank) + uint32_t(n_ranks) - e % uint32_t(n_ranks)) % uint32_t(n_ranks));
    for (size_t p = 0; p < rotated.size(); ++p) rotated[p] = weights[(p + e) % weights.size()];
    const Range r = weights.empty() ? split_evenly(units / block, n_ranks, part)
                                    : split_weighted(units / block, rotated, part);
    held[e] = {r.begin * block, r.end * block};
  }
  return held;
}

std::string describe_plan(const ModelConfig& config, int n_ranks, const ShardWeights& weights) {
  std::string text;
  auto span = [](Range r, uint32_t unit) { return std::to_string(r.begin * unit) + "-" + std::to_string(r.end * unit - 1); };
  for (int r = 0; r < n_ranks; ++r) {
    const Shard s = Shard::for_rank(config, r, n_ranks, weights);
    text += (r ? "; rank " : "rank ") + std::to_string(r) + ": KV heads " + span(s.kv_heads, 1);
    if (uint32_t(n_ranks) > config.n_kv_heads) text += ", query heads " + span(s.q_heads, 1);
    if (s.ffn.size()) text += ", FFN units " + span(s.ffn, 1);
    if (!s.expert_units.empty()) {
      uint64_t held = 0;
      for (const Range& u : s.expert_units) held += u.size();
      text += ", expert units " + std::to_string(held) + " of " +
              std::to_string(uint64_t(config.expert_ffn_dim) * config.n_experts);
    }
    text += ", vocabulary " + span(s.vocab, 1);
  }
  return text;
}

}  // namespace r1pi
