#include "runtime/mpi/mpi_world.h"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>

#include "common/error.h"
#include "runtime/mpi/rank_binding.h"

#if defined(__SANITIZE_ADDRESS__)
// ASan builds (scripts/sanitize): LeakSanitizer's suppressions of what Open MPI keeps until exit
// (tests/sanitizers/lsan.supp) match library names in each allocation's stack, and Debian's Open MPI
// has no frame pointers, so a process that starts MPI must unwind every allocation's stack the slow
// way. Only the programs that link this file start MPI; in every other one the slow unwinding
// would multiply the run time of allocation-heavy code (loading tokenizer.json) for nothing, so it
// is their default here, not in the environment. ASAN_OPTIONS still overrides it.
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
#endif

namespace r1pi {

namespace {

// This rank's number as the launcher gave it (Open MPI or PMIx), before MPI can say it.
const char* launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* value = std::getenv(name)) return value;
  return "?";
}

// Whether a launcher started this process as a rank of a job (mpirun, or srun with PMI/PMIx). A
// process started by hand is a job of one: MPI_Init would then start Open MPI's singleton
// daemon (orted), 0.6-0.8 s of every start-up for a one-rank run that makes no MPI call.
bool launched_as_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID"})
    if (std::getenv(name)) return true;
  return false;
}

// Ends the process when MPI_Init has not returned within the timeout. MPI itself has no timeout
// there: its start-up exchange waits for every rank, so one rank stopped before it would hold
// every other rank (and mpirun) forever.
class InitWatchdog {
 public:
  explicit InitWatchdog(double seconds)
      : thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; }))
            return;
          std::fprintf(stderr,
                       "error: rank %s: MPI_Init did not complete within %g s (--rank-timeout): "
                       "a rank of the job did not start or is stopped\n",
                       launcher_rank(), seconds);
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  ~InitWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

MpiWorld::MpiWorld(int* argc, char*** argv, double init_timeout) {
  if (!launched_as_rank()) return;
  // Before MPI_Init: its threads, and every one started later, take this thread's CPUs.
  const std::string widened = widen_default_binding();
  if (!widened.empty() && std::string_view(launcher_rank()) == "0") std::fprintf(stderr, "note: %s\n", widened.c_str());
  int provided = 0;
  int status = 0;
  {
    InitWatchdog watchdog(init_timeout);
    status = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
  if (status != MPI_SUCCESS) throw Error("MPI initialisation failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  initialized_ = true;
}

MpiWorld::~MpiWorld() {
  if (initialized_) MPI_Finalize();
}

void MpiWorld::abort(int code) const {
  if (initialized_) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace r1pi
