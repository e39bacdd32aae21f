// The project's own memory read: sums a buffer with the widest loads the CPU has (AVX2, else SSE2
// on x86; NEON on ARM), four independent accumulators, nothing else per byte. Shared by
// read_bandwidth and bench_kernels so that "fraction of the read bandwidth" compares like with like.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/huge_buffer.h"

namespace r1pi { class ThreadPool; }

namespace r1pi::bench {

// Sum of [p, p + n) as 64-bit words (p 64-byte aligned, n a multiple of 128).
uint64_t read_sum(const uint8_t* p, size_t n);
// Which loads read_sum uses here: "avx2", "sse2", "neon" or "scalar".
const char* read_sum_kind();

// Memory as the engine holds its weights (common/huge_buffer.h: huge pages asked for), every page
// written (so reads hit real memory, not the shared zero page).
HugeBuffer alloc_buffer(size_t bytes);

// Reads the whole buffer once with the pool's threads (4 MiB chunks handed out as the matrix
// products hand out rows); returns GB/s (1e9 bytes per second).
double read_once(ThreadPool& pool, const uint8_t* p, size_t bytes);

}  // namespace r1pi::bench
