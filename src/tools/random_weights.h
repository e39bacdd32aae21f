// Deterministic pseudo-random weights: every row of every tensor is a pure function of
// (seed, tensor name, row), so a file's bytes do not depend on the order or the threads that
// generate it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace r1pi {

// Seed of one tensor's stream (FNV-1a of the name, mixed with the model seed).
uint64_t tensor_seed(uint64_t seed, std::string_view tensor_name);

// out[i] = offset + amplitude * u_i, u_i uniform in [-1, 1) (standard deviation amplitude/sqrt(3)),
// from splitmix64 seeded by (tensor seed, row).
void random_row(uint64_t tensor_seed, uint64_t row, float offset, float amplitude, float* out,
                size_t n);

}  // namespace r1pi
