// The MPI job this process belongs to. Only the main thread calls MPI (compute threads never do),
// so MPI_THREAD_FUNNELED is all we ask for.
#pragma once

namespace r1pi {

class MpiWorld {
 public:
  MpiWorld(int* argc, char*** argv);
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
};

}  // namespace r1pi
