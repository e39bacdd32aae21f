// One RoPE rotation of a pair (x0, x1) by (cos, sin), as the recipe in kernels.h writes it: the
// scalar reference rotates every pair with it, the SIMD rope kernels their leftover pairs.
#pragma once

namespace r1pi {

inline void rotate_pair(float& x0, float& x1, float c, float s) {
  const float a = x0, b = x1;
  x0 = a * c - b * s;
  x1 = a * s + b * c;
}

}  // namespace r1pi
