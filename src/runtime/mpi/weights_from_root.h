// --weights-from-root: rank 0 reads the GGUF file and sends every other rank its header and its
// weight slices, for boards that hold no copy of the model.
#pragma once
#include <optional>
#include <string>

#include "model/model_loader.h"
#include "runtime/mpi/mpi_world.h"

namespace r1pi {

// Collective: rank 0 loads path and sends every other rank its slices; they receive them. Returns
// nothing on every rank when any rank failed before the transfer (rank 0 has printed why).
std::optional<LoadedModel> load_from_root(const std::string& path, const MpiWorld& world,
                                          const ShardWeights& weights = {});

}  // namespace r1pi
