// Round to the nearest integer, ties to even, with two float additions: adding 1.5 * 2^23 pushes
// the fraction bits out of the significand, so the addition itself rounds (IEEE default mode),
// and subtracting the constant back is exact. Equal to std::nearbyint for |v| < 2^22, except that
// a result of zero is always +0 (irrelevant once converted to an integer). SIMD backends may use
// their native round-to-nearest-even instructions instead: the integers are the same.
#pragma once
#include <cstdint>
#include <cstring>

namespace r1pi {

inline float round_even(float v) {
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23
  return (v + kShifter) - kShifter;
}

// ggml's nearest_int (its K-quant quantisers): ties to even for |v| < 2^22 (1.5 * 2^23 shifts the
// fraction out), and for larger inputs the same wrapped bits ggml gets, so even pathological rows
// match byte for byte.
inline int nearest_int(float v) {
  const float shifted = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

}  // namespace r1pi
