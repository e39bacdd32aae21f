// IQ4_NL and IQ4_XS rows: ggml's reference quantisers without an importance matrix
// (quantize_row_iq4_nl_ref, quantize_row_iq4_xs_ref), and their dequantisers. Each 32-element
// block's scale is searched: the least-squares scale for the levels nearest to x / d, for d from
// the largest value and 15 nearby steps, weighted by x^2; IQ4_XS then stores the eight block
// scales as 6-bit multiples of one super-block scale.
#include <cmath>
#include <cstring>

#include "ggml/fp16.h"
#include "ggml/legacy_layout.h"
#include "ggml/quant_fits.h"
#include "ggml/quantize.h"

namespace r1pi {

namespace {

constexpr int kTries = 7;

// The level of kvalues_iq4nl nearest to x (the lower one on a tie: ggml's best_index_int8).
int nearest_level(float x) {
  const int8_t* v = kvalues_iq4nl;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (x < v[mid] ? hi : lo) = mid;
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// ggml's nearest_int: round to nearest, ties to even, through the float's mantissa.
int nearest_int(float f) {
  const float v = f + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &v, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

// The best scale of one 32-element block (0 for a block of zeros), ggml's search.
float block_scale(const float* x) {
  float weight[QK4_0];
  float amax = 0, max = 0;
  for (int j = 0; j < QK4_0; ++j) {
    weight[j] = x[j] * x[j];
    if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
  }
  if (amax < kGroupMaxEps) return 0;
  const int8_t* v = kvalues_iq4nl;
  auto fit = [&](float id, float& sumqx, float& sumq2) {
    sumqx = sumq2 = 0;
    for (int j = 0; j < QK4_0; ++j) {
      const float q = v[nearest_level(id * x[j])];
      sumqx += weight[j] * q * x[j];
      sumq2 += weight[j] * q * q;
    }
  };
  float sumqx, sumq2;
  fit(1 / (-max / v[0]), sumqx, sumq2);
  float d = sumqx / sumq2, best = d * sumqx;
  for (int t = -kTries; t <= kTries; ++t) {
    fit((float(t) + v[0]) / max, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) d = sumqx / sumq2, best = d * sumqx;
  }
  return d;
}

// The 32 levels of x for scale d (levels of 0 for d = 0), packed as nibbles.
void pack_levels(const float* x, float d, uint8_t* qs) {
  const float id = d != 0 ? 1 / d : 0.0f;
  uint8_t q[QK4_0];
  for (int j = 0; j < QK4_0; ++j) q[j] = uint8_t(nearest_level(id * x[j]));
  for (int j = 0; j < 16; ++j) qs[j] = uint8_t(q[j] | (q[j + 16] << 4));
}

}  // namespace

void quantize_row_iq4_nl_ref(const float* x, block_iq4_nl* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = block_scale(x + b * QK4_0);
    y[b].d = fp32_to_fp16(d);
    pack_levels(x + b * QK4_0, d, y[b].qs);
  }
}

void quantize_row_iq4_xs_ref(const float* x, block_iq4_xs* y, int64_t n) {
  constexpr int kBlocks = QK_K / QK4_0;
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    const float* xs = x + sb * QK_K;
    block_iq4_xs& out = y[sb];
    float scales[kBlocks], max_scale = 0, amax_scale = 0;
    for (int b = 0; b < kBlocks; ++b) {
      scales[b] = block_scale(xs + QK4_0 * b);
      if (std::fabs(scales[b]) > amax_scale) amax_scale = std::fabs(scales[b]), max_scale = scales[b];
    }
    // One scale for the super-block; each block's a 6-bit multiple of it, -32..31.
    const float d = -max_scale / 32;
    const float id = d != 0 ? 1 / d : 0.0f;
    out.d = fp32_to_fp16(d);
    out.scales_h = 0;
    std::memset(out.scales_l, 0, sizeof out.scales_l);
    for (int b = 0; b < kBlocks; ++b) {
      int l = nearest_int(id * scales[b]);
      l = l < -32 ? -32 : l > 31 ? 31 : l;
      pack_levels(xs + QK4_0 * b, d * float(l), out.qs + 16 * b);
      l += 32;
      out.scales_l[b / 2] = uint8_t(out.scales_l[b / 2] | ((l & 0xF) << (4 * (b % 2))));
      out.scales_h = uint16_t(out.scales_h | ((l >> 4) << (2 * b)));
    }
  }
}

void dequantize_row_iq4_nl(const block_iq4_nl* x, float* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    unpack_nibbles(x[b].qs, q);
    for (int j = 0; j < QK4_0; ++j) y[b * QK4_0 + j] = d * float(kvalues_iq4nl[q[j]]);
  }
}

void dequantize_row_iq4_xs(const block_iq4_xs* x, float* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t sb = 0; sb < n / QK_K; ++sb) {
    const float d = fp16_to_fp32(x[sb].d);
    for (int b = 0; b < QK_K / QK4_0; ++b) {
      const float dl = d * float(iq4_xs_scale(x[sb], b) - 32);
      unpack_nibbles(x[sb].qs + 16 * b, q);
      for (int j = 0; j < QK4_0; ++j) y[sb * QK_K + QK4_0 * b + j] = dl * float(kvalues_iq4nl[q[j]]);
    }
  }
}

}  // namespace r1pi
