#include "common/thread_pool.h"

#include <algorithm>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_relax() { _mm_pause(); }
#elif defined(__aarch64__)
static inline void cpu_relax() { asm volatile("yield"); }
#else
static inline void cpu_relax() {}
#endif

namespace r1pi {

namespace {
// About 20-50 us of polling: long enough to catch the next matmul of the same forward pass,
// short enough that a thread without a core of its own soon gets out of the way.
constexpr int kSpinIterations = 20000;

// Spins until pred() holds or the budget is spent; true if it holds.
template <typename Pred>
bool spin_until(Pred pred) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (pred()) return true;
    cpu_relax();
  }
  return pred();
}
}  // namespace

int ThreadPool::available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads > 0 ? n_threads : available_cores()) {
  // Workers start from generation 0: one that starts late must still see the first job.
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(0); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

// Guided: each grab takes half of an even share of what is left (never less than job_chunk_), so
// the first chunks are long and the last ones short: a thread that finishes early waits at most
// one short chunk for the others; with fixed chunks it could wait for a whole long one (decode
// measured both ways: bench/README.md).
void ThreadPool::run_chunks() {
  for (;;) {
    int64_t begin = next_.load(std::memory_order_relaxed), size;
    do {
      if (begin >= job_n_) return;
      size = std::max(job_chunk_, (job_n_ - begin) / (2 * int64_t(n_threads_)));
    } while (!next_.compare_exchange_weak(begin, begin + size, std::memory_order_relaxed));
    (*job_)(begin, std::min(job_n_, begin + size));
  }
}

void ThreadPool::worker_loop(uint64_t seen) {
  for (;;) {
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      sleepers_.fetch_add(1);
      // Dekker-style pairing with parallel_for: either we see the new generation here, or the
      // dispatcher sees us in sleepers_ and wakes us.
      while (generation_.load() == seen) generation_.wait(seen);
      sleepers_.fetch_sub(1);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    run_chunks();
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_workers_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const RangeFn& fn, int64_t chunk) {
  if (n <= 0) return;
  if (chunk <= 0) chunk = std::max<int64_t>(1, n / (int64_t(n_threads_) * 4));
  if (workers_.empty() || n <= chunk) {
    for (int64_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk));
    return;
  }
  job_ = &fn;
  job_n_ = n;
  job_chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  busy_workers_.store(int(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: publishes the job
  if (sleepers_.load() > 0) generation_.notify_all();
  run_chunks();
  // Wait for the workers to finish their chunks (and to have left run_chunks()).
  if (!spin_until([&] { return busy_workers_.load(std::memory_order_acquire) == 0; })) {
    for (int b; (b = busy_workers_.load(std::memory_order_acquire)) != 0;) busy_workers_.wait(b);
  }
  job_ = nullptr;
}

}  // namespace r1pi
