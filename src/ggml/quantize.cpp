// Q4_0, Q8_0 and F16 rows, and the by-type entry points (through the trait table in
// ggml_type.cpp). Q6_K lives in quantize_q6_K.cpp.
#include "ggml/quantize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "ggml/fp16.h"
#include "ggml/round_even.h"

namespace r1pi {

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float* xb = x + b * QK4_0;
    // The value of largest magnitude, sign kept: it maps to q = 0 (d * -8), the one end of the
    // asymmetric range -8..7 that is always used.
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < QK4_0; ++j) {
      if (amax < std::fabs(xb[j])) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    // x * id lies within [-8, 8] (to rounding), so x * id + 8.5 truncates to 0..16, clamped to
    // 15. Only when 1/d overflows (|max| < 2^-125) is it infinite or NaN; ggml's int8 cast then
    // yields 0 on x86, and so do we.
    auto quant = [id](float v) {
      const float t = v * id + 8.5f;
      return std::isfinite(t) ? uint8_t(std::min(15, int(t))) : uint8_t(0);
    };
    for (int j = 0; j < QK4_0 / 2; ++j) {
      y[b].qs[j] = uint8_t(quant(xb[j]) | (quant(xb[j + QK4_0 / 2]) << 4));
    }
  }
}

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    const float* xb = x + b * QK8_0;
    float amax = 0.0f;
    for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    // A subnormal d (amax < 127 * FLT_MIN) is stored as fp16 zero anyway; treating it as zero
    // keeps 1/d finite, so every quant is a well-defined 0. For normal d, |x * id| <= 127.00003
    // and rounds into -127..127.
    const float id = d >= FLT_MIN ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < QK8_0; ++j) y[b].qs[j] = int8_t(round_even(xb[j] * id));
  }
}

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    float* yb = y + b * QK4_0;
    for (int j = 0; j < QK4_0 / 2; ++j) {
      yb[j] = float((x[b].qs[j] & 0x0F) - 8) * d;
      yb[j + QK4_0 / 2] = float((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < QK8_0; ++j) y[b * QK8_0 + j] = float(x[b].qs[j]) * d;
  }
}

void dequantize_row_f16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

namespace {

// Refuses a type r1pi cannot (de)quantise, or a length that is not whole blocks.
const GgmlTypeTraits& checked_row(GgmlType type, int64_t n, const char* what) {
  if (!ggml_type_supported(uint32_t(type))) {
    throw Error(std::string(what) + ": unsupported ggml type " + std::to_string(uint32_t(type)));
  }
  const GgmlTypeTraits& t = ggml_traits(type);
  if (n < 0 || n % int64_t(t.block_elements) != 0) {
    throw Error(std::string(what) + ": row of " + std::to_string(n) +
                " elements is not a whole number of " + std::to_string(t.block_elements) +
                "-element blocks");
  }
  return t;
}

}  // namespace

void dequantize_row(GgmlType type, const void* x, float* y, int64_t n) {
  checked_row(type, n, "dequantize_row").dequantize(x, y, n);
}

void quantize_row(GgmlType type, const float* x, void* y, int64_t n) {
  checked_row(type, n, "quantize_row").quantize(x, y, n);
}

}  // namespace r1pi
