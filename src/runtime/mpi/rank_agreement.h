// Collective checks that keep a multi-rank job from hanging when one rank fails: every rank says
// whether it succeeded, and all of them stop together when any did not.
#pragma once
#include <optional>
#include <string>

#include "runtime/mpi/mpi_world.h"
#include "runtime/run_options.h"

namespace r1pi {

// True when every rank passed an empty error; otherwise rank 0 prints each failing rank's message
// (identical messages once) and every rank gets false.
bool all_succeeded(const MpiWorld& world, const std::string& error);

// The job's first collective, which every rank reaches whatever its command line said: error is
// this rank's start-up failure (a bad flag, an unreadable prompt file; empty when none), help
// whether it was asked for --help. Rank 0's options are the job's; the ones every rank must share
// (they decide which collectives run) are compared, and a rank started with another value is
// refused, naming the option and the ranks. Returns the exit status when the job ends here (0
// after rank 0 printed its help), nothing when every rank may go on.
std::optional<int> start_job(const MpiWorld& world, const RunOptions& mine, const std::string& error,
                             bool help);

}  // namespace r1pi
