#include "model/shard.h"

#include "model/llama_config.h"

namespace r1pi {

Shard Shard::whole(const LlamaConfig& config) {
  return Shard{{0, config.n_kv_heads}, {0, config.ffn_dim}, {0, config.n_vocab}};
}

}  // namespace r1pi
