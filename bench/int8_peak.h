// Each kernel backend's own int8 multiply-add rate on this CPU: the instruction its batched products
// are built on (vpdpbusd on 512- and 256-bit registers, AVX2's vpmaddubsw + vpmaddwd + vpaddd, NEON's
// sdot or smull + sadalp) in 12 independent chains per thread, nothing else. bench_kernels sets
// each batched product's GOP/s beside it (peak_frac): what share of the silicon the product uses.
#pragma once

namespace r1pi::bench {

// GOP/s (a multiply-add counts 2) of `backend`'s instruction on `threads` threads at once; 0 for a
// backend without one here (scalar, or one this build's CPU family does not have).
double int8_peak_gops(const char* backend, int threads);

}  // namespace r1pi::bench
