// The bytes that requests hold while they are received and answered (their unparsed input and
// bodies), counted across every connection of the server against one budget: without it, 300
// connections each holding a 1 MiB body one byte short took 300 MB, and the per-address cap alone
// allows its count times the body limit.
#pragma once
#include <atomic>
#include <cstddef>

namespace r1pi {

class RequestMemory {
 public:
  explicit RequestMemory(size_t budget) : budget_(budget) {}
  // Counts bytes more; false (counting nothing) when they would pass the budget.
  bool take(size_t bytes);
  // Counts bytes less, once their memory is freed. After large releases the allocator is asked to
  // return its free pages to the system (glibc keeps freed heap memory for reuse, so a burst of
  // bodies would otherwise stay in the server's RSS after their clients left).
  void release(size_t bytes);
  size_t in_use() const { return in_use_; }
  size_t budget() const { return budget_; }

 private:
  const size_t budget_;
  std::atomic<size_t> in_use_{0};
  std::atomic<size_t> released_since_trim_{0};
};

}  // namespace r1pi
