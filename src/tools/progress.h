// "writing FILE: 42% (1953 of 4650 MB, 310 MB/s)" on stderr, redrawn in place a few times a second;
// nothing at all when disabled or when stderr is not a terminal (logs stay clean).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace r1pi {

class Progress {
 public:
  // already_done: bytes done before this run (a resumed download): counted in the percentage,
  // not in the speed.
  Progress(std::string label, uint64_t total_bytes, bool enabled, uint64_t already_done = 0);
  void add(uint64_t bytes);
  void finish();  // the final figures and a newline (when active)

 private:
  void draw();

  std::string label_;
  uint64_t total_;
  uint64_t done_;
  uint64_t already_done_;
  bool active_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace r1pi
