// The main() of an MPI test program: the world with r1pi's rank timeout, then run(); an error on
// any rank ends the whole job, naming the program and the rank (the other ranks would wait forever).
#pragma once
#include <cstdio>
#include <exception>

#include "runtime/mpi/mpi_world.h"
#include "runtime/run_options.h"

namespace r1pi::test {

inline int mpi_test_main(int argc, char** argv, const char* program,
                         int (*run)(int argc, char** argv, const MpiWorld& world)) {
  MpiWorld world(&argc, &argv, kDefaultRankTimeout);
  try {
    return run(argc, argv, world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: error: %s\n", program, world.rank(), e.what());
    world.abort(1);
  }
}

}  // namespace r1pi::test
