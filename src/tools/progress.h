// "writing FILE: 42% (1953 of 4650 MB, 310 MB/s)" on stderr, redrawn in place a few times a second;
// nothing at all when disabled or when stderr is not a terminal (logs stay clean).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace r1pi {

class Progress {
 public:
  Progress(std::string label, uint64_t total_bytes, bool enabled);
  void add(uint64_t bytes);
  void finish();  // the final figures and a newline (when active)

 private:
  void draw();

  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool active_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace r1pi
