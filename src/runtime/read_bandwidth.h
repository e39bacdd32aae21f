// How fast this machine reads memory: decode reads every weight byte once per token, so this rate
// over the bytes read per token bounds a board's tokens per second (--shard-weights auto weighs
// the ranks by it; r1pi-cluster check predicts with it).
#pragma once

namespace r1pi {

// GB/s: a 128 MiB buffer summed by `threads` threads (0: one per core), the best of three passes
// (about 0.1 s).
double measure_read_bandwidth(int threads);

}  // namespace r1pi
