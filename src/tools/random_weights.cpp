#include "tools/random_weights.h"

namespace r1pi {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 24 random bits -> [-1, 1): exact in float, symmetric, no rounding at the ends.
float unit(uint32_t bits24) { return (static_cast<float>(bits24) - 8388608.0f) * (1.0f / 8388608.0f); }

}  // namespace

uint64_t tensor_seed(uint64_t seed, std::string_view tensor_name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : tensor_name) h = (h ^ c) * 0x100000001b3ull;
  uint64_t state = seed ^ h;
  return splitmix64(state);
}

void random_row(uint64_t tensor_seed, uint64_t row, float offset, float amplitude, float* out,
                size_t n) {
  // Each row's stream starts at a hashed position, so neighbouring rows' streams do not overlap.
  uint64_t row_key = tensor_seed + row;
  uint64_t state = splitmix64(row_key);
  size_t i = 0;
  // Two 24-bit draws per 64-bit output.
  for (; i + 1 < n; i += 2) {
    const uint64_t r = splitmix64(state);
    out[i] = offset + amplitude * unit(static_cast<uint32_t>(r >> 40));
    out[i + 1] = offset + amplitude * unit(static_cast<uint32_t>(r & 0xffffff));
  }
  if (i < n) out[i] = offset + amplitude * unit(static_cast<uint32_t>(splitmix64(state) >> 40));
}

}  // namespace r1pi
