// Q4_1, Q5_0 and Q5_1 rows (the 32-element types llama-quantize falls back to when a row is not
// whole 256-element super-blocks) and BF16 rows, as ggml's reference code writes and reads them.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>

#include "ggml/bf16.h"
#include "ggml/fp16.h"
#include "ggml/legacy_layout.h"
#include "ggml/quantize.h"

namespace r1pi {

namespace {

// ggml's (int8_t) cast of a float as x86 performs it: truncation to int32 (INT32_MIN for a NaN or
// a value out of range), then the low byte. Only a scale whose inverse overflows (a block of
// values below 2^-125 or so) leaves the range.
int8_t int8_cast(float v) {
  const int32_t i = std::isfinite(v) && std::fabs(v) < 2147483648.0f ? int32_t(v) : INT32_MIN;
  return int8_t(uint8_t(uint32_t(i) & 0xFF));
}

// Q4_1 and Q5_1 (x ~ d * q + min): d = (max - min) / nmax over the block, q = (x - min) / d + 0.5
// truncated; ggml caps Q4_1's q at 15 and leaves Q5_1's as it comes.
template <typename Block>
void quantize_scale_min(const float* xb, int nmax, bool cap, Block& y, uint8_t* q) {
  float min = FLT_MAX, max = -FLT_MAX;  // ggml's loop and starting values
  for (int j = 0; j < QK4_0; ++j) {
    if (xb[j] < min) min = xb[j];
    if (xb[j] > max) max = xb[j];
  }
  const float d = (max - min) / float(nmax);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  y.m = fp32_to_fp16(min);
  for (int j = 0; j < QK4_0; ++j) {
    const int v = int8_cast((xb[j] - min) * id + 0.5f);
    q[j] = uint8_t(cap ? std::min(nmax, v) : v);
  }
}

// qs (and qh) from 32 values of `bits` bits.
void pack(const uint8_t* q, uint8_t* qs, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = uint8_t((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
    h |= uint32_t((q[j] >> 4) & 1) << j;
    h |= uint32_t((q[j + 16] >> 4) & 1) << (j + 16);
  }
  if (qh) std::memcpy(qh, &h, sizeof h);
}

}  // namespace

void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    quantize_scale_min(x + b * QK4_0, 15, true, y[b], q);
    pack(q, y[b].qs, nullptr);
  }
}

void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n) {
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float* xb = x + b * QK4_0;
    float amax = 0.0f, max = 0.0f;  // the value of largest magnitude, sign kept (as Q4_0)
    for (int j = 0; j < QK4_0; ++j)
      if (amax < std::fabs(xb[j])) amax = std::fabs(xb[j]), max = xb[j];
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    uint8_t q[QK4_0];
    for (int j = 0; j < QK4_0; ++j) q[j] = uint8_t(std::min<int>(31, int8_cast(xb[j] * id + 16.5f)));
    pack(q, y[b].qs, y[b].qh);
  }
}

void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    quantize_scale_min(x + b * QK4_0, 31, false, y[b], q);
    pack(q, y[b].qs, y[b].qh);
  }
}

void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    unpack_nibbles(x[b].qs, q);
    for (int j = 0; j < QK4_0; ++j) y[b * QK4_0 + j] = float(q[j]) * d + m;
  }
}

void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    unpack_5bit(x[b].qh, x[b].qs, q);
    for (int j = 0; j < QK4_0; ++j) y[b * QK4_0 + j] = float(int(q[j]) - 16) * d;
  }
}

void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n) {
  uint8_t q[QK4_0];
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    unpack_5bit(x[b].qh, x[b].qs, q);
    for (int j = 0; j < QK4_0; ++j) y[b * QK4_0 + j] = float(q[j]) * d + m;
  }
}

void quantize_row_bf16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

void dequantize_row_bf16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
}

}  // namespace r1pi
