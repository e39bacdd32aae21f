// The K-quants with a min term as ggml's reference quantisers: Q4_K and Q5_K (quantize_row_q4_K_ref,
// quantize_row_q5_K_ref: make_qkx2_quants with weights |x| + rms) and Q2_K (quantize_row_q2_K_ref:
// the same fit over 16 elements, weights |x|, absolute errors), no importance matrix, so that
// r1pi-model writes the bytes llama.cpp's tools would; and their dequantisers. The fits:
// quant_fits.h, eight sub-blocks at once. Layouts: q4_K_layout.h, q23_K_layout.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/fp16.h"
#include "ggml/q23_K_layout.h"
#include "ggml/q4_K_layout.h"
#include "ggml/quant_fits.h"
#include "ggml/quantize.h"
#include "ggml/round_even.h"

namespace r1pi {

namespace {

constexpr int kSub = 32;                // elements per sub-block
constexpr int kSubs = QK_K / kSub;      // sub-blocks per super-block

// The parts Q4_K and Q5_K share: per sub-block a fitted scale and min, both quantised to 6 bits
// against the super-block's largest (d = max scale / 63, dmin = max min / 63) and packed as
// q4_K_layout.h says; then every value requantised against what the block stores, into L.
void quantize_super_block(const float* x, int nmax, float rmin, int nstep, uint16_t& d,
                          uint16_t& dmin, uint8_t* packed, uint8_t* L) {
  static_assert(kSubs == 8, "one sub-block per lane of fit_with_offset_x8");
  float weights[QK_K];
  Fit fits[kSubs];
  for (int j = 0; j < kSubs; ++j) {
    const float* xj = x + kSub * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < kSub; ++l) sum_x2 += xj[l] * xj[l];
    const float rms = std::sqrt(sum_x2 / float(kSub));
    for (int l = 0; l < kSub; ++l) weights[kSub * j + l] = rms + std::fabs(xj[l]);
  }
  fit_with_offset_x8(x, weights, L, fits, kSub, nmax, rmin, 0.1f, nstep, false);
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kSubs; ++j) {
    if (fits[j].scale > max_scale) max_scale = fits[j].scale;
    if (fits[j].min > max_min) max_min = fits[j].min;
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::memset(packed, 0, K_SCALE_SIZE);
  for (int j = 0; j < kSubs; ++j) {
    // ggml stores the rounded value in a uint8_t before clamping (a negative one wraps to >= 63).
    const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * fits[j].scale)));
    const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * fits[j].min)));
    if (j < 4) {
      packed[j] |= ls;
      packed[j + 4] |= lm;
    } else {
      packed[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] |= uint8_t((ls >> 4) << 6);
      packed[j] |= uint8_t((lm >> 4) << 6);
    }
  }
  d = fp32_to_fp16(max_scale / 63.0f);
  dmin = fp32_to_fp16(max_min / 63.0f);
  for (int j = 0; j < kSubs; ++j) {
    const ScaleMin sm = k4_scale_min(packed, j);
    const float dj = fp16_to_fp32(d) * float(sm.scale);
    if (dj == 0.0f) continue;
    const float mj = fp16_to_fp32(dmin) * float(sm.min);
    for (int i = 0; i < kSub; ++i)
      L[kSub * j + i] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[kSub * j + i] + mj) / dj))));
  }
}

// ggml's order for a value: (d * scale) * q - dmin * min, each product rounded.
void dequantize_super_block(uint16_t d16, uint16_t dmin16, const uint8_t* packed, const uint8_t* q,
                            float* y) {
  const float d = fp16_to_fp32(d16), dmin = fp16_to_fp32(dmin16);
  for (int j = 0; j < kSubs; ++j) {
    const ScaleMin sm = k4_scale_min(packed, j);
    const float dj = d * float(sm.scale), mj = dmin * float(sm.min);
    for (int i = 0; i < kSub; ++i) y[kSub * j + i] = dj * float(q[kSub * j + i]) - mj;
  }
}

}  // namespace

void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n) {
  uint8_t L[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    quantize_super_block(x, 15, -1.0f, 20, y[i].d, y[i].dmin, y[i].scales, L);
    for (int c = 0; c < QK_K / 64; ++c)
      for (int l = 0; l < 32; ++l)
        y[i].qs[32 * c + l] = uint8_t(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
  }
}

void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n) {
  uint8_t L[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    quantize_super_block(x, 31, -0.5f, 15, y[i].d, y[i].dmin, y[i].scales, L);
    std::memset(y[i].qh, 0, sizeof y[i].qh);
    for (int c = 0; c < QK_K / 64; ++c) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = L[64 * c + l], hi = L[64 * c + 32 + l];
        y[i].qs[32 * c + l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
        y[i].qh[l] |= uint8_t(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
      }
    }
  }
}

void dequantize_row_q4_K(const block_q4_K* x, float* y, int64_t n) {
  uint8_t q[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    unpack_q4_K(x[i], q);
    dequantize_super_block(x[i].d, x[i].dmin, x[i].scales, q, y);
  }
}

void dequantize_row_q5_K(const block_q5_K* x, float* y, int64_t n) {
  uint8_t q[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    unpack_q5_K(x[i], q);
    dequantize_super_block(x[i].d, x[i].dmin, x[i].scales, q, y);
  }
}

// Q2_K: per 16-element sub-block a fitted scale and min (weights |x|, absolute errors), both
// quantised to 4 bits against the super-block's largest; then every value requantised against
// what the block stores.
void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n) {
  constexpr int kSub16 = 16, kSubs16 = QK_K / 16;
  uint8_t L[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    float weights[QK_K];
    Fit fits[kSubs16];
    for (int l = 0; l < QK_K; ++l) weights[l] = std::fabs(x[l]);
    for (int half = 0; half < 2; ++half)  // eight sub-blocks per call
      fit_with_offset_x8(x + QK_K / 2 * half, weights + QK_K / 2 * half, L + QK_K / 2 * half, fits + 8 * half,
                         kSub16, 3, -0.5f, 0.1f, 15, true);
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < kSubs16; ++j) {
      if (fits[j].scale > max_scale) max_scale = fits[j].scale;
      if (fits[j].min > max_min) max_min = fits[j].min;
    }
    block_q2_K& b = y[i];
    if (max_scale > 0) {
      const float iscale = 15.0f / max_scale;
      for (int j = 0; j < kSubs16; ++j) b.scales[j] = uint8_t(nearest_int(iscale * fits[j].scale));
      b.d = fp32_to_fp16(max_scale / 15.0f);
    } else {
      std::memset(b.scales, 0, sizeof b.scales);
      b.d = fp32_to_fp16(0.0f);
    }
    if (max_min > 0) {
      const float iscale = 15.0f / max_min;
      for (int j = 0; j < kSubs16; ++j) b.scales[j] = uint8_t(b.scales[j] | (nearest_int(iscale * fits[j].min) << 4));
      b.dmin = fp32_to_fp16(max_min / 15.0f);
    } else {
      b.dmin = fp32_to_fp16(0.0f);
    }
    for (int j = 0; j < kSubs16; ++j) {
      const float d = fp16_to_fp32(b.d) * float(b.scales[j] & 0xF);
      if (d == 0.0f) continue;
      const float dm = fp16_to_fp32(b.dmin) * float(b.scales[j] >> 4);
      for (int l = 0; l < kSub16; ++l)
        L[kSub16 * j + l] = uint8_t(std::max(0, std::min(3, nearest_int((x[kSub16 * j + l] + dm) / d))));
    }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l)
        b.qs[32 * h + l] = uint8_t(L[128 * h + l] | (L[128 * h + l + 32] << 2) | (L[128 * h + l + 64] << 4) |
                                   (L[128 * h + l + 96] << 6));
  }
}

void dequantize_row_q2_K(const block_q2_K* x, float* y, int64_t n) {
  uint8_t q[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
    unpack_q2_K(x[i], q);
    for (int s = 0; s < QK_K / 16; ++s) {
      const float dl = d * float(x[i].scales[s] & 0xF), ml = dmin * float(x[i].scales[s] >> 4);
      for (int l = 0; l < 16; ++l) y[16 * s + l] = dl * float(q[16 * s + l]) - ml;
    }
  }
}

}  // namespace r1pi
