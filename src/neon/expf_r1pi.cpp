#include "neon/expf_r1pi.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "neon/kernels.h"
#include "ggml/round_even.h"

namespace r1pi {

float expf_r1pi(float x) {
  if (std::isnan(x)) return x;
  if (x < kExpMin) return 0.0f;
  if (x > kExpMax) return std::numeric_limits<float>::infinity();
  const float n = round_even(x * kLog2e);
  float r = std::fma(n, -kLn2Hi, x);
  r = std::fma(n, -kLn2Lo, r);
  float p = kExpPoly[7];
  for (int k = 6; k >= 0; --k) p = std::fma(p, r, kExpPoly[k]);
  uint32_t bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits += uint32_t(int32_t(n)) << 23;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

}  // namespace r1pi
