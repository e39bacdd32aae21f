// Compute threads, created once per process.
//
// Hand-off: a worker that finds no work spins briefly (fast when it owns a core), then sleeps on a
// futex (std::atomic::wait) so that oversubscribed ranks and threads do not burn the cores that the
// others need. Work is handed out in chunks from a shared counter, long ones first (run_chunks); a
// chunk's results never depend on which thread runs it, so every thread count gives the same bytes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace r1pi {

class ThreadPool {
 public:
  // n_threads counts the calling thread; 0 means the cores available to this process.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), on all threads including the
  // caller; returns when all ranges are done. Ranges shrink from half an even share per thread
  // down to `chunk` items (0: automatic), the last one excepted.
  using RangeFn = std::function<void(int64_t begin, int64_t end)>;
  void parallel_for(int64_t n, const RangeFn& fn, int64_t chunk = 0);

  // Cores this process may run on (sched_getaffinity), at least 1.
  static int available_cores();

 private:
  void worker_loop(uint64_t seen);
  void run_chunks();

  int n_threads_;
  std::vector<std::thread> workers_;
  // Current job.
  const RangeFn* job_ = nullptr;
  int64_t job_n_ = 0;
  int64_t job_chunk_ = 1;
  std::atomic<int64_t> next_{0};
  // Hand-off state.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace r1pi
