// Round to the nearest integer, ties to even, with two float additions: adding 1.5 * 2^23 pushes
// the fraction bits out of the significand, so the addition itself rounds (IEEE default mode),
// and subtracting the constant back is exact. Equal to std::nearbyint for |v| < 2^22, except that
// a result of zero is always +0 (irrelevant once converted to an integer). SIMD backends may use
// their native round-to-nearest-even instructions instead: the integers are the same.
#pragma once

namespace r1pi {

inline float round_even(float v) {
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23
  return (v + kShifter) - kShifter;
}

}  // namespace r1pi
