// MXFP4 rows: ggml's reference quantiser (quantize_row_mxfp4_ref) and dequantiser. The block's
// exponent puts its largest magnitude in the top binade of the levels (floor(log2 amax) - 2, so
// that amax / 2^(e - 127) lies in [4, 8), the range of E2M1's 4 and 6); each element then takes
// the nearest level, the first on a tie.
#include <algorithm>
#include <cmath>

#include "ggml/quantize.h"

namespace r1pi {

namespace {

// The code of the level nearest to x at scale d; the lowest code on a tie (ggml's order, which
// gives +0 for x = 0 and the positive level for ties between a level and its negative).
uint8_t nearest_code(float x, float d) {
  int best = 0;
  float best_err = std::fabs(float(kvalues_mxfp4[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(float(kvalues_mxfp4[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return uint8_t(best);
}

}  // namespace

void quantize_row_mxfp4_ref(const float* x, block_mxfp4* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b, x += QK4_0) {
    float amax = 0.0f;
    for (int j = 0; j < QK4_0; ++j) amax = std::max(amax, std::fabs(x[j]));
    // ggml's cast of a negative exponent (a block below 2^-125) is undefined; r1pi takes 0 there.
    const int exponent = amax > 0.0f ? int(std::floor(std::log2(amax))) - 2 + 127 : 0;
    const uint8_t e = uint8_t(std::max(exponent, 0));
    const float d = e8m0_to_fp32_half(e);
    y[b].e = e;
    for (int j = 0; j < QK4_0 / 2; ++j)
      y[b].qs[j] = uint8_t(nearest_code(x[j], d) | nearest_code(x[j + QK4_0 / 2], d) << 4);
  }
}

void dequantize_row_mxfp4(const block_mxfp4* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b, y += QK4_0) {
    const float d = e8m0_to_fp32_half(x[b].e);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      y[j] = float(kvalues_mxfp4[x[b].qs[j] & 0x0F]) * d;
      y[j + QK4_0 / 2] = float(kvalues_mxfp4[x[b].qs[j] >> 4]) * d;
    }
  }
}

}  // namespace r1pi
