// The shard plan's weights of a job (--shard-weights): none (equal shares), rank 0's list, or
// "auto": every rank's measured read bandwidth (decode reads every weight byte per token, so a
// board's share should follow how fast it reads). Rank 0 prints the plan.
#pragma once
#include <optional>
#include <string>

#include "model/shard.h"
#include "runtime/mpi/mpi_world.h"

namespace r1pi {

// Collective. `given`: --shard-weights as rank 0 was given it ("" none, "auto", or "2,1,1").
// nullopt when rank 0's list is wrong (rank 0 said why): the job ends.
std::optional<ShardWeights> agree_shard_weights(const std::string& given, int threads, const MpiWorld& world);

}  // namespace r1pi
