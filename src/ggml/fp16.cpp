#include "ggml/fp16.h"

namespace r1pi {

namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Drops the low `shift` bits of `value` and rounds to nearest, ties to even. A carry out of the
// mantissa lands in the exponent field, which is exactly the IEEE result (up to and including inf).
uint32_t shift_round_even(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1)));
}

}  // namespace

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) {
    // inf, or NaN with its payload kept and the quiet bit set (an F16C conversion quiets NaNs).
    return bits_float(sign | 0x7f800000 | (mantissa ? 0x400000 | (mantissa << 13) : 0));
  }
  if (exponent != 0) return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);
  // Subnormal half: mantissa * 2^-24 is a normal float; move the leading 1 into the hidden bit.
  int lead = 9;
  while (!(mantissa & (1u << lead))) --lead;
  const uint32_t fraction = (mantissa << (23 - lead)) & 0x7fffff;
  return bits_float(sign | (uint32_t(lead + 103) << 23) | fraction);
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000;
  const uint32_t a = u & 0x7fffffff;
  // NaN: quiet, keeping the top payload bits. From 65536 up (and inf) the result is inf.
  if (a > 0x7f800000) return uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
  if (a >= 0x47800000) return uint16_t(sign | 0x7c00);
  if (a >= 0x38800000) {
    // Normal half: rebias the exponent (127 -> 15) and round the mantissa from 23 to 10 bits.
    return uint16_t(sign | shift_round_even(a - (112u << 23), 13));
  }
  // Subnormal half (units of 2^-24). At or below 2^-25 the nearest, or the even tie, is zero.
  if (a <= 0x33000000) return uint16_t(sign);
  const uint32_t exponent = a >> 23;                    // 102..112
  const uint32_t mantissa = (a & 0x7fffff) | 0x800000;  // value = mantissa * 2^(exponent-150)
  return uint16_t(sign | shift_round_even(mantissa, int(126 - exponent)));
}

}  // namespace r1pi
