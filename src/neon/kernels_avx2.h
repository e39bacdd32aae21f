// Internals of the x86 backends (kernels_x86_ops.cpp) that the tests look at directly. The backends
// themselves are reached through kernels.h (kernels_avx2 ...).
#pragma once
#include <cstdint>

namespace r1pi {

// y[i] = expf_r1pi(x[i]) by the eight-lane code that softmax and silu_mul use (tails through the
// same code on a zero-padded copy). AVX2 instructions: call only where kernels_avx2() is not
// nullptr. In builds not for x86 it does nothing.
void expf_r1pi_avx2_unchecked(const float* x, float* y, int64_t n);

}  // namespace r1pi
