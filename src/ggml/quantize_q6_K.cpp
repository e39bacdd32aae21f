// Q6_K exactly as ggml's reference quantiser (quantize_row_q6_K_ref, make_qx_quants with
// rmse_type 1 and no importance weights; quant_fits.h, eight groups at once), so r1pi-model writes
// the bytes llama.cpp would.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/fp16.h"
#include "ggml/q6_K_layout.h"
#include "ggml/quant_fits.h"
#include "ggml/round_even.h"
#include "ggml/quantize.h"

namespace r1pi {

void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n) {
  int8_t L[QK_K];
  float scales[QK_K / 16];
  for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
    // One scale per 16 values; the super-block scale d maps the largest-magnitude one to -128.
    for (int half = 0; half < 2; ++half)  // eight groups per call
      make_qx_quants_x8(16, 32, x + QK_K / 2 * half, L + QK_K / 2 * half, scales + 8 * half);
    float max_scale = 0.0f;
    float max_abs_scale = 0.0f;
    for (int ib = 0; ib < QK_K / 16; ++ib) {
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof(block_q6_K));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    y[i].d = fp32_to_fp16(1.0f / iscale);
    for (int ib = 0; ib < QK_K / 16; ++ib) {
      y[i].scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    }
    // Requantise every value against the scale the block actually stores.
    for (int j = 0; j < QK_K / 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * float(y[i].scales[j]);
      if (d == 0.0f) continue;
      for (int ii = 0; ii < 16; ++ii) {
        const int l = nearest_int(x[16 * j + ii] / d);
        L[16 * j + ii] = int8_t(std::max(-32, std::min(31, l)) + 32);
      }
    }
    // Pack as q6_K_layout.h describes: low nibbles of quarters 0/2 and 1/3 share ql bytes, the
    // four high 2-bit fields of one lane share a qh byte.
    for (int h = 0; h < 2; ++h) {
      const int8_t* Lh = L + 128 * h;
      uint8_t* ql = y[i].ql + 64 * h;
      uint8_t* qh = y[i].qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = uint8_t((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
        ql[l + 32] = uint8_t((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
        qh[l] = uint8_t((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                        ((Lh[l + 96] >> 4) << 6));
      }
    }
  }
}

void dequantize_row_q6_K(const block_q6_K* x, float* y, int64_t n) {
  int8_t q[QK_K];
  for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
    unpack_q6_K(x[i], q);
    const float d = fp16_to_fp32(x[i].d);
    // ggml's order: (d * scale) * q, each product rounded.
    for (int e = 0; e < QK_K; ++e) y[e] = (d * float(x[i].scales[e / 16])) * float(q[e]);
  }
}

}  // namespace r1pi
