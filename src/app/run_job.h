// What r1pi and r1pi-perplexity do after parsing their command lines: on several ranks the job's
// first collective (start_job) and run_distributed, on one rank run_single_rank; rank 0's session
// drives the engine. A failure past start-up ends every rank of the job: a rank that returned while
// the others wait in a collective would hang it.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>

#include "common/error.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"
#include "tokenizer/printable_text.h"
#ifdef R1PI_HAVE_MPI
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_binding.h"
#include "runtime/mpi/rank_watchdog.h"
#endif

namespace r1pi {

// Prints "error: WHAT" after whatever stdout holds; returns the exit status 1. WHAT may quote the
// model file (names, keys, values): escape sequences and invalid UTF-8 are printed escaped.
inline int report_error(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", printable_text(what, true).c_str());
  return 1;
}

#ifdef R1PI_HAVE_MPI
using JobWorld = MpiWorld;
#else
// One process, no MPI: made as an MpiWorld is, so that every program starts its job one way.
struct JobWorld {
  JobWorld(int*, char***, double) {}
  bool is_root() const { return true; }
};
#endif

// --rank-timeout as given on the command line, read before MPI starts (MPI_Init is guarded by it
// too); anything unreadable gives the default here and an error from the real parse later.
inline double rank_timeout_before_mpi(int argc, char** argv) {
  const std::string flag = "--rank-timeout";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = nullptr;
    if (arg == flag && i + 1 < argc) value = argv[i + 1];
    if (arg.rfind(flag + "=", 0) == 0) value = argv[i] + flag.size() + 1;
    if (!value) continue;
    char* end = nullptr;
    const double seconds = std::strtod(value, &end);
    if (end != value && *end == 0 && std::isfinite(seconds) && seconds > 0) return seconds;
  }
  return kDefaultRankTimeout;
}

// error: this rank's start-up failure (empty when none); help: --help was asked for (and printed
// by rank 0). Returns the process's exit status.
inline int run_job([[maybe_unused]] JobWorld& world, const RunOptions& o, const std::string& error, bool help,
                   const Session& session) {
#ifdef R1PI_HAVE_MPI
  const bool several = world.size() > 1;
  auto fail = [&](const char* what) {
    report_error(what);
    if (several) world.abort(1);
    return 1;
  };
#else
  auto fail = [](const char* what) { return report_error(what); };
#endif
  try {
#ifdef R1PI_HAVE_MPI
    const std::string failure = error.empty() ? binding_error(o.threads) : error;
    if (several) {
      set_rank_timeout(o.rank_timeout);  // until start_job adopts rank 0's
      if (const std::optional<int> status = start_job(world, o, failure, help)) return *status;
      return run_distributed(o, world, session);
    }
#else
    const std::string& failure = error;
#endif
    if (help) return 0;
    if (!failure.empty()) return report_error(failure.c_str());
    return run_single_rank(o, session);
  } catch (const Error& e) {
    return fail(e.what());
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  }
}

}  // namespace r1pi
