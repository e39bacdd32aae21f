// The MPI job this process belongs to: a job of one, without MPI, when no launcher started it. Only the main thread calls MPI (compute threads never do),
// so MPI_THREAD_FUNNELED is all we ask for.
#pragma once
#include <string>

namespace r1pi {

class MpiWorld {
 public:
  // MPI_Init waits for every rank of the job to start; when that takes more than init_timeout
  // seconds (a rank that never started, or was stopped before it got there), this process
  // ends with status 1 and says so, and mpirun then ends the rest of the job.
  MpiWorld(int* argc, char*** argv, double init_timeout);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  // Ends every rank of the job with this exit code (for failures after the ranks parted ways).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1;
  bool initialized_ = false;  // MPI_Init was called (a launcher started this process)
};

}  // namespace r1pi
