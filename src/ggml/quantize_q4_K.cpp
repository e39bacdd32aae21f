// The K-quants with a min term as ggml's reference quantisers: Q4_K and Q5_K (quantize_row_q4_K_ref,
// quantize_row_q5_K_ref: make_qkx2_quants with weights |x| + rms) and Q2_K (quantize_row_q2_K_ref:
// the same fit over 16 elements, weights |x|, absolute errors), no importance matrix, so that
// r1pi-model writes the bytes llama.cpp's tools would; and their dequantisers. Layouts:
// q4_K_layout.h, q23_K_layout.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/fp16.h"
#include "ggml/q23_K_layout.h"
#include "ggml/q4_K_layout.h"
#include "ggml/quantize.h"
#include "ggml/round_even.h"

namespace r1pi {

namespace {

constexpr int kSub = 32;                // elements per sub-block
constexpr int kSubs = QK_K / kSub;      // sub-blocks per super-block

struct Fit {
  float scale;
  float min;  // the offset subtracted (>= 0): x ~ scale * q - min
};

// Fits x[i] ~ scale * L[i] + offset (offset <= 0) with L in 0..nmax, minimising the weighted
// squared error: starts from offset min(x, 0) and the range up to max x, then tries nstep + 1
// scales (rmin + rdelta * is + nmax) / (max x - offset), each with the least-squares scale and
// offset for its integers, keeping the best. As in ggml, a trial that wins moves the offset the
// later trials quantise from and divide by. Errors are squared, or absolute with use_mad (Q2_K).
// Every operation a separately rounded float one in ggml's order.
Fit fit_with_offset(const float* x, const float* w, uint8_t* L, int n, int nmax, float rmin, float rdelta,
                    int nstep, bool use_mad = false) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(L, L + n, uint8_t(0));
    return {0.0f, -lo};
  }
  float offset = lo;
  auto quant = [nmax, &offset](float iscale, float v) {
    return uint8_t(std::max(0, std::min(nmax, nearest_int(iscale * (v - offset)))));
  };
  auto error = [&](float scale, float offset, const uint8_t* q) {
    float e = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = (scale * float(q[i]) + offset) - x[i];
      e += w[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  float iscale = float(nmax) / (hi - lo);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) L[i] = quant(iscale, x[i]);
  float best = error(scale, offset, L);
  uint8_t trial[kSub];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (hi - offset);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      trial[i] = quant(iscale, x[i]);
      const float wl = w[i] * float(trial[i]);
      sum_l += wl;
      sum_l2 += wl * float(trial[i]);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0.0f)) continue;
    float s = (sum_w * sum_xl - sum_x * sum_l) / det;
    float o = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (o > 0.0f) {
      o = 0.0f;
      s = sum_xl / sum_l2;
    }
    const float e = error(s, o, trial);
    if (e < best) {
      std::memcpy(L, trial, size_t(n));
      best = e;
      scale = s;
      offset = o;
    }
  }
  return {scale, -offset};
}

// The parts Q4_K and Q5_K share: per sub-block a fitted scale and min, both quantised to 6 bits
// against the super-block's largest (d = max scale / 63, dmin = max min / 63) and packed as
// q4_K_layout.h says; then every value requantised against what the block stores, into L.
void quantize_super_block(const float* x, int nmax, float rmin, int nstep, uint16_t& d,
                          uint16_t& dmin, uint8_t* packed, uint8_t* L) {
  float weights[kSub];
  Fit fits[kSubs];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kSubs; ++j) {
    const float* xj = x + kSub * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < kSub; ++l) sum_x2 += xj[l] * xj[l];
    const float rms = std::sqrt(sum_x2 / float(kSub));
    for (int l = 0; l < kSub; ++l) weights[l] = rms + std::fabs(xj[l]);
    fits[j] = fit_with_offset(xj, weights, L + kSub * j, kSub, nmax, rmin, 0.1f, nstep);
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
    float weights[kSub16];
    Fit fits[kSubs16];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < kSubs16; ++j) {
      for (int l = 0; l < kSub16; ++l) weights[l] = std::fabs(x[kSub16 * j + l]);
      fits[j] = fit_with_offset(x + kSub16 * j, weights, L + kSub16 * j, kSub16, 3, -0.5f, 0.1f, 15, true);
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
