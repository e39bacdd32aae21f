#include "server/request_memory.h"

#include <malloc.h>

namespace r1pi {

namespace {

// Released bytes between two trims: a trim walks every arena (a millisecond or so), a body is at
// most 1 MiB by default.
constexpr size_t kTrimEvery = 8 << 20;

}  // namespace

bool RequestMemory::take(size_t bytes) {
  size_t now = in_use_.load();
  do {
    if (bytes > budget_ - now) return false;
  } while (!in_use_.compare_exchange_weak(now, now + bytes));
  return true;
}

void RequestMemory::release(size_t bytes) {
  if (bytes == 0) return;
  in_use_ -= bytes;
  const size_t released = released_since_trim_ += bytes;
  // Trim once a trim's worth has gone, or when the last request's memory went (the server is
  // back at rest: what its clients held should no longer show).
  if (released >= kTrimEvery || (in_use_ == 0 && released >= (1 << 20))) {
    released_since_trim_ = 0;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
  }
}

}  // namespace r1pi
