// --sync auto, the default: which exchange of partial sums is fastest is the network's business.
// On four boards an allgather of one small row takes two rounds of recursive doubling, a direct
// exchange one round plus three sends; the emulated network (every rank on one machine) cannot
// tell them apart, real boards can. So the job times each method at start-up on a row of the
// model's width and takes the fastest. Every method leaves the same bytes (q8_0_sync.h), so the
// choice never changes the output.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/q8_0_sync.h"

namespace r1pi {

// Collective. The method --sync names, or for "auto" the one whose slowest rank's median time per
// sync of `row` values is least (ties: the earlier in kSyncMethods); every rank gets the same, and
// rank 0 prints the times.
SyncMethod resolve_sync_method(const std::string& name, const MpiWorld& world, int64_t row);

}  // namespace r1pi
