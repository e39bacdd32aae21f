// The memory a new allocation can take now without pushing anything out to the OOM killer:
// MemAvailable from /proc/meminfo (free memory plus the page cache and other memory the kernel can
// reclaim), not the machine's total, which other processes and this one's weights already hold.
#pragma once
#include <cstdint>

namespace r1pi {

// Bytes; where /proc/meminfo cannot be read or has no MemAvailable line (kernels before 3.14), the
// free pages the C library reports; 0 when even that is unknown.
uint64_t available_memory_bytes();

}  // namespace r1pi
