// A job of several ranks: every rank loads its shard (or receives it from rank 0), the ranks check
// they hold the same model, then rank 0 generates while the others follow its control messages.
#pragma once
#include "runtime/mpi/mpi_world.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"

namespace r1pi {

// Returns the process exit code (0, or 1 with the reason printed by rank 0).
// With options.session, rank 0 runs the session and then stops the workers.
int run_distributed(const RunOptions& options, const MpiWorld& world, const Session& session = {});

}  // namespace r1pi
