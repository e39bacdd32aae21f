// Collective checks that keep a multi-rank job from hanging when one rank fails: every rank says
// whether it succeeded, and all of them stop together when any did not.
#pragma once
#include <string>

#include "runtime/mpi/mpi_world.h"

namespace r1pi {

// True when every rank passed an empty error; otherwise rank 0 prints each failing rank's message
// (identical messages once) and every rank gets false.
bool all_succeeded(const MpiWorld& world, const std::string& error);

}  // namespace r1pi
