#include "runtime/mpi/rank_agreement.h"

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace r1pi {

bool all_succeeded(const MpiWorld& world, const std::string& error) {
  int failed = error.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!any) return true;
  int len = int(error.size());
  std::vector<int> lens(size_t(world.size())), offsets(size_t(world.size()));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (world.is_root()) {
    for (int r = 0, off = 0; r < world.size(); off += lens[size_t(r)], ++r) offsets[size_t(r)] = off;
    all.resize(size_t(offsets.back() + lens.back()));
  }
  MPI_Gatherv(error.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (world.is_root()) {
    std::string previous;
    for (int r = 0; r < world.size(); ++r) {
      const std::string e = all.substr(size_t(offsets[size_t(r)]), size_t(lens[size_t(r)]));
      // Identical failures (the same bad flag on every rank) are reported once.
      if (!e.empty() && e != previous) std::fprintf(stderr, "error: rank %d: %s\n", r, e.c_str());
      if (!e.empty()) previous = e;
    }
  }
  return false;
}

}  // namespace r1pi
