// Memory read bandwidth as r1pi's threads see it: the whole of a >= 1 GiB anonymous buffer (huge
// pages where the kernel gives them) summed with AVX2 (x86) or NEON (ARM) loads, with 1 and 2
// threads by default. One line per thread count, easy to parse:
//   read_bandwidth threads=2 bytes=1073741824 loads=avx2 best_GBps=<x> median_GBps=<y>
// Usage: read_bandwidth [--gib G] [--threads 1,2,...] [--reps N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "read_sum.h"
#include "common/thread_pool.h"

int main(int argc, char** argv) {
  double gib = 1.0;
  std::vector<int> threads = {1, 2};
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gib" && i + 1 < argc) {
      gib = std::atof(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      std::string list = argv[++i];
      for (size_t pos = 0; pos <= list.size();) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        threads.push_back(std::max(1, std::atoi(list.substr(pos, comma - pos).c_str())));
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--gib G (>= 1)] [--threads 1,2] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  const size_t bytes = size_t(std::max(1.0, gib) * double(size_t(1) << 30)) & ~size_t(127);
  const r1pi::HugeBuffer memory = r1pi::bench::alloc_buffer(bytes);
  const uint8_t* buf = memory.data();
  for (int t : threads) {
    r1pi::ThreadPool pool(t);
    r1pi::bench::read_once(pool, buf, bytes);  // warm-up: page tables, thread wake-up
    std::vector<double> gbps;
    for (int r = 0; r < reps; ++r) gbps.push_back(r1pi::bench::read_once(pool, buf, bytes));
    std::sort(gbps.begin(), gbps.end());
    std::printf("read_bandwidth threads=%d bytes=%zu loads=%s best_GBps=%.2f median_GBps=%.2f\n", t,
                bytes, r1pi::bench::read_sum_kind(), gbps.back(), gbps[gbps.size() / 2]);
    std::fflush(stdout);
  }
  return 0;
}
