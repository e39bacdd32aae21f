// bfloat16: the top 16 bits of an IEEE float, as ggml converts it (ggml_compute_fp32_to_bf16):
// round to nearest, ties to even; a NaN stays a NaN, made quiet. Widening is exact.
#pragma once
#include <cstdint>
#include <cstring>

namespace r1pi {

inline uint16_t fp32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 64);
  return uint16_t((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

inline float bf16_to_fp32(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace r1pi
