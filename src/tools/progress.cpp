#include "tools/progress.h"

#include <cstdio>
#include <unistd.h>

namespace r1pi {

Progress::Progress(std::string label, uint64_t total_bytes, bool enabled, uint64_t already_done)
    : label_(std::move(label)),
      total_(total_bytes),
      done_(already_done),
      already_done_(already_done),
      active_(enabled && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::add(uint64_t bytes) {
  done_ += bytes;
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double mb = done_ / 1e6;
  const int percent = total_ ? static_cast<int>(100.0 * done_ / total_) : 100;
  std::fprintf(stderr, "\r%s: %3d%% (%.0f of %.0f MB, %.0f MB/s)  ", label_.c_str(), percent, mb,
               total_ / 1e6, seconds > 0 ? (done_ - already_done_) / 1e6 / seconds : 0.0);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!active_) return;
  draw();
  std::fputc('\n', stderr);
}

}  // namespace r1pi
