// Q3_K as ggml's reference quantiser (quantize_row_q3_K_ref: make_q3_quants per 16-element
// sub-block, weights x^2, no importance matrix), so that r1pi-model writes the bytes llama.cpp's
// tools would; and its dequantiser. Layout: q23_K_layout.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/fp16.h"
#include "ggml/q23_K_layout.h"
#include "ggml/quant_fits.h"
#include "ggml/quantize.h"
#include "ggml/round_even.h"

namespace r1pi {

namespace {

// Symmetric levels -nmax .. nmax-1 for n values: from the largest value's scale, then up to five
// passes that move single values to another level when that raises the weighted fit
// (sum w x l)^2 / (sum w l^2), w = x^2. Returns the least-squares scale; L gets level + nmax.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), max = x[i];
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  const float iscale = -float(nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * float(L[i]) * float(L[i]);
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
        if (l != L[i]) {
          slx += w * x[i] * float(l);
          sl2 += w * float(l) * float(l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return sumlx / suml2;
}

}  // namespace

void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n) {
  constexpr int kSub = 16, kSubs = QK_K / kSub;
  int8_t L[QK_K];
  float scales[kSubs];
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    block_q3_K& b = y[i];
    float max_scale = 0, amax = 0;
    for (int j = 0; j < kSubs; ++j) {
      scales[j] = make_q3_quants(kSub, 4, x + kSub * j, L + kSub * j);
      if (std::fabs(scales[j]) > amax) amax = std::fabs(scales[j]), max_scale = scales[j];
    }
    std::memset(b.scales, 0, sizeof b.scales);
    if (max_scale != 0) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < kSubs; ++j) {
        // ggml keeps the rounded scale in an int8_t before clamping it.
        int l = int8_t(nearest_int(iscale * scales[j]));
        l = std::max(-32, std::min(31, l)) + 32;
        if (j < 8) b.scales[j] = uint8_t(l & 0xF);
        else b.scales[j - 8] = uint8_t(b.scales[j - 8] | ((l & 0xF) << 4));
        b.scales[8 + j % 4] = uint8_t(b.scales[8 + j % 4] | ((l >> 4) << (2 * (j / 4))));
      }
      b.d = fp32_to_fp16(1 / iscale);
    } else {
      b.d = fp32_to_fp16(0.0f);
    }
    for (int j = 0; j < kSubs; ++j) {
      const float d = fp16_to_fp32(b.d) * float(q3_K_scale_code(b.scales, j) - 32);
      if (d == 0.0f) continue;
      for (int l = 0; l < kSub; ++l)
        L[kSub * j + l] = int8_t(std::max(-4, std::min(3, nearest_int(x[kSub * j + l] / d))) + 4);
    }
    // The high bit of element e in bit e / 32 of hmask[e % 32]; the two low bits as Q2_K's.
    std::memset(b.hmask, 0, sizeof b.hmask);
    for (int e = 0; e < QK_K; ++e)
      if (L[e] > 3) {
        b.hmask[e % 32] = uint8_t(b.hmask[e % 32] | (1 << (e / 32)));
        L[e] = int8_t(L[e] - 4);
      }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l)
        b.qs[32 * h + l] = uint8_t(L[128 * h + l] | (L[128 * h + l + 32] << 2) | (L[128 * h + l + 64] << 4) |
                                   (L[128 * h + l + 96] << 6));
  }
}

void dequantize_row_q3_K(const block_q3_K* x, float* y, int64_t n) {
  int8_t q[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    const float d = fp16_to_fp32(x[i].d);
    unpack_q3_K(x[i], q);
    for (int s = 0; s < QK_K / 16; ++s) {
      const float dl = d * float(q3_K_scale_code(x[i].scales, s) - 32);
      for (int l = 0; l < 16; ++l) y[16 * s + l] = dl * float(q[16 * s + l]);
    }
  }
}

}  // namespace r1pi
