// Internals of the NEON backends (kernels_neon.cpp) that the tests look at directly. The
// backends themselves are reached through kernels.h (kernels_neon, kernels_neon_dotprod).
#pragma once
#include <cstdint>

namespace r1pi {

// y[i] = expf_r1pi(x[i]) computed four lanes at a time by the NEON code that softmax and silu_mul
// use (a last n % 4 by the scalar function). Returns false, writing nothing, where this build has
// no NEON backend.
bool expf_r1pi_neon(const float* x, float* y, int64_t n);

}  // namespace r1pi
