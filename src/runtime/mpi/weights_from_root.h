// --weights-from-root: rank 0 reads the GGUF file and sends every other rank its header and its
// weight slices, for boards that hold no copy of the model.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "model/model_loader.h"
#include "runtime/mpi/mpi_world.h"

namespace r1pi {

// Which shard a rank holds (the same rule on every rank).
using RankShardRule = std::function<Shard(const GgufFile&, const LlamaConfig&, int rank)>;

// Collective: rank 0 loads path and sends every other rank its slices; they receive them. Returns
// nothing on every rank when any rank failed before the transfer (rank 0 has printed why).
std::optional<LoadedModel> load_from_root(const std::string& path, const RankShardRule& shard_for,
                           const MpiWorld& world);

}  // namespace r1pi
