// The reference quantisers: hand-computed blocks, ties, extreme scales, the Q6_K layout, and
// round-trip error bounds derived from each format's rounding rule.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.h"
#include "ggml/fp16.h"
#include "ggml/quantize.h"

namespace r1pi {
namespace {

constexpr double kU = 0x1p-24;  // unit roundoff of float

std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(size_t(n), 0.0f);
  for (float& v : x) v = normal(rng);
  return x;
}

// The 4-bit value of element j of a Q4_0 block: low nibbles hold 0..15, high nibbles 16..31.
int q4_nibble(const block_q4_0& b, int j) { return j < 16 ? b.qs[j] & 0xF : b.qs[j - 16] >> 4; }

// ---- Q4_0 -----------------------------------------------------------------------------------

TEST(QuantizeQ4_0, ZeroBlock) {
  std::vector<float> x(32, 0.0f);
  block_q4_0 b;
  quantize_row_q4_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, 0x8000);                     // d = 0 / -8 = -0, as ggml stores it
  for (uint8_t q : b.qs) EXPECT_EQ(q, 0x88);  // id = 0: every x * id + 8.5 truncates to 8
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(QuantizeQ4_0, NegativeMaxHandComputed) {
  // max = -8 (largest magnitude, negative): d = -8 / -8 = 1, id = 1, q = trunc(x + 8.5) <= 15.
  std::vector<float> x(32, 0.0f);
  x[0] = -8.0f;    // 0.5 -> q 0
  x[1] = 7.0f;     // 15.5 -> 15
  x[2] = 7.5f;     // 16.0 -> 16, clamped to 15
  x[3] = 0.5f;     // exactly on a boundary: 9.0 -> 9
  x[4] = 0.4999f;  // just below it: 8.9999 -> 8
  x[5] = -0.5f;    // 8.0 -> 8
  x[6] = -1.5f;    // 7.0 -> 7
  x[7] = -3.2f;    // 5.3 -> 5
  x[16] = 2.6f;    // 11.1 -> 11 (high nibble of qs[0])
  x[31] = -7.9f;   // 0.6 -> 0
  block_q4_0 b;
  quantize_row_q4_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, fp32_to_fp16(1.0f));
  const int expected[32] = {0,  15, 15, 9, 8, 8, 7, 5, 8, 8, 8, 8, 8, 8, 8, 8,
                            11, 8,  8,  8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 0};
  for (int j = 0; j < 32; ++j) EXPECT_EQ(q4_nibble(b, j), expected[j]) << j;
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], float(expected[j] - 8)) << j;
}

TEST(QuantizeQ4_0, PositiveMaxHandComputed) {
  // max = 4: d = -0.5, id = -2, so the sign flips and x = 4 lands on q = 0.
  std::vector<float> x(32, 0.0f);
  x[0] = 1.0f;   // -2 + 8.5 = 6.5 -> 6
  x[1] = 4.0f;   // -8 + 8.5 = 0.5 -> 0
  x[2] = -4.0f;  // 8 + 8.5 = 16.5 -> 16, clamped to 15
  x[3] = -1.0f;  // 10.5 -> 10
  block_q4_0 b;
  quantize_row_q4_0_ref(x.data(), &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), -0.5f);
  EXPECT_EQ(q4_nibble(b, 0), 6);
  EXPECT_EQ(q4_nibble(b, 1), 0);
  EXPECT_EQ(q4_nibble(b, 2), 15);
  EXPECT_EQ(q4_nibble(b, 3), 10);
  EXPECT_EQ(q4_nibble(b, 4), 8);
}

TEST(QuantizeQ4_0, FirstOfEqualMagnitudesSetsTheSign) {
  std::vector<float> x(32, 0.0f);
  x[3] = 3.0f;
  x[9] = -3.0f;
  block_q4_0 b;
  quantize_row_q4_0_ref(x.data(), &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), fp16_to_fp32(fp32_to_fp16(3.0f / -8.0f)));
  std::swap(x[3], x[9]);
  quantize_row_q4_0_ref(x.data(), &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), fp16_to_fp32(fp32_to_fp16(-3.0f / -8.0f)));
}

TEST(QuantizeQ4_0, RoundTripErrorBound) {
  const int64_t n = 32 * 256;
  const std::vector<float> x = random_row(n, 11, 0.7f);
  std::vector<block_q4_0> q(size_t(n / 32));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row_q4_0_ref(x.data(), q.data(), n);
  dequantize_row_q4_0(q.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float max = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(max) < std::fabs(x[b * 32 + j])) max = x[b * 32 + j];
    }
    const double d = double(max / -8.0f);  // the scale quantisation used
    const double stored = fp16_to_fp32(q[size_t(b)].d);
    for (int j = 0; j < 32; ++j) {
      const int64_t i = b * 32 + j;
      // Half a step, except above x/d = 7.5 where q = 15 is the clamp (up to a full step);
      // plus the fp16 rounding of d times |q - 8| <= 8, plus float rounding of x * id.
      const double steps = x[i] / d > 7.5 ? 1.0 : 0.5;
      const double bound = steps * std::fabs(d) + 8 * std::fabs(stored - d) + 4 * kU * std::fabs(d);
      ASSERT_LE(std::fabs(double(y[i]) - x[i]), bound) << "element " << i;
    }
  }
}

// ---- Q8_0 -----------------------------------------------------------------------------------

TEST(QuantizeQ8_0, ZeroBlock) {
  std::vector<float> x(32, 0.0f);
  block_q8_0 b;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, 0x0000);
  for (int8_t q : b.qs) EXPECT_EQ(q, 0);
}

TEST(QuantizeQ8_0, TiesRoundToEven) {
  // amax = 127 gives d = 1 and id = 1, so x * id is exactly x.
  std::vector<float> x(32, 0.0f);
  const float in[] = {127.0f, 2.5f, 3.5f, -2.5f, -3.5f, 0.5f, 1.5f, -0.5f, 126.5f, -125.5f};
  const int out[] = {127, 2, 4, -2, -4, 0, 2, 0, 126, -126};
  std::copy(std::begin(in), std::end(in), x.begin());
  block_q8_0 b;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), 1.0f);
  for (size_t j = 0; j < std::size(out); ++j) EXPECT_EQ(b.qs[j], out[j]) << j;

  // amax = 63.5 gives d = 0.5 and id = 2: 1.25 -> 2.5 -> 2, 1.75 -> 3.5 -> 4.
  std::fill(x.begin(), x.end(), 0.0f);
  x[0] = -63.5f;
  x[1] = 1.25f;
  x[2] = 1.75f;
  x[3] = -0.25f;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(fp16_to_fp32(b.d), 0.5f);
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], 2);
  EXPECT_EQ(b.qs[2], 4);
  EXPECT_EQ(b.qs[3], 0);
}

TEST(QuantizeQ8_0, ExtremeScales) {
  block_q8_0 b;
  std::vector<float> x(32, 0.0f);
  // Tiny: the quants are fine but fp16(d) underflows to 0, so the block reads back as zeros.
  x[0] = 1e-30f;
  x[1] = -0.25e-30f;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], -32);  // -31.75
  EXPECT_EQ(b.d, 0x0000);
  // Huge: the quants are fine but fp16(d) overflows to inf (outside Q8_0's range).
  x[0] = 1e30f;
  x[1] = -0.25e30f;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], -32);
  EXPECT_EQ(b.d, 0x7c00);
  // Subnormal d (amax < 127 * FLT_MIN): treated as zero, so 1/d never overflows.
  x[0] = 1e-40f;
  x[1] = -1e-41f;
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, 0x0000);
  for (int8_t q : b.qs) EXPECT_EQ(q, 0);
  x[0] = 1e-36f;  // d = 7.9e-39 < FLT_MIN
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.qs[0], 0);
  x[0] = 2e-36f;  // d = 1.6e-38, normal
  quantize_row_q8_0_ref(x.data(), &b, 32);
  EXPECT_EQ(b.qs[0], 127);
}

TEST(QuantizeQ8_0, MatchesNearbyintAndErrorBound) {
  const int64_t n = 32 * 512;
  std::vector<float> x = random_row(n, 5, 3.0f);
  for (int64_t i = 0; i < n; i += 97) x[size_t(i)] *= 100.0f;  // some blocks with outliers
  std::vector<block_q8_0> q(size_t(n / 32));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row_q8_0_ref(x.data(), q.data(), n);
  dequantize_row_q8_0(q.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    const float d = amax / 127.0f;
    const float id = 1.0f / d;
    const double stored = fp16_to_fp32(q[size_t(b)].d);
    ASSERT_EQ(q[size_t(b)].d, fp32_to_fp16(d));
    for (int j = 0; j < 32; ++j) {
      const int64_t i = b * 32 + j;
      ASSERT_EQ(q[size_t(b)].qs[j], int(std::nearbyint(x[i] * id))) << "element " << i;
      // Half a step, plus |q| <= 127 times the fp16 rounding of d, plus float rounding of x * id.
      const double bound = 0.5 * d + 127 * std::fabs(stored - d) + 4 * kU * std::fabs(x[i]);
      ASSERT_LE(std::fabs(double(y[i]) - x[i]), bound) << "element " << i;
    }
  }
}

// ---- Q6_K -----------------------------------------------------------------------------------

// Element e's 6-bit value, read straight from ggml's layout description (q6_K_layout.h).
int q6_value(const block_q6_K& b, int e) {
  const int h = e / 128, g = (e % 128) / 32, l = e % 32;
  const uint8_t byte = b.ql[64 * h + l + 32 * (g & 1)];
  const int low = g < 2 ? byte & 0xF : byte >> 4;
  const int high = (b.qh[32 * h + l] >> (2 * g)) & 3;
  return low | (high << 4);
}

TEST(QuantizeQ6_K, HandPackedBlockDequantises) {
  block_q6_K b;
  std::memset(&b, 0, sizeof b);
  b.d = fp32_to_fp16(0.25f);
  for (int j = 0; j < 16; ++j) b.scales[j] = int8_t(j * 9 - 70);
  int q[256];
  for (int e = 0; e < 256; ++e) {
    q[e] = (e * 37 + 11) % 64;
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    b.ql[64 * h + l + 32 * (g & 1)] |= uint8_t((q[e] & 0xF) << (g < 2 ? 0 : 4));
    b.qh[32 * h + l] |= uint8_t((q[e] >> 4) << (2 * g));
  }
  float y[256];
  dequantize_row_q6_K(&b, y, 256);
  for (int e = 0; e < 256; ++e) {
    ASSERT_EQ(q6_value(b, e), q[e]);
    // Exact in float: 0.25 * scale * (q - 32) has at most 8 + 6 significant bits.
    ASSERT_EQ(y[e], 0.25f * float(b.scales[e / 16]) * float(q[e] - 32)) << e;
  }
}

TEST(QuantizeQ6_K, ZeroRowIsAllZeroBytes) {
  std::vector<float> x(512, 0.0f);
  x[7] = 1e-17f;  // below ggml's 1e-15 group threshold: still all zero
  block_q6_K b[2];
  std::memset(b, 0xAB, sizeof b);
  quantize_row_q6_K_ref(x.data(), b, 512);
  const std::vector<uint8_t> zeros(sizeof b, 0);
  EXPECT_EQ(std::memcmp(b, zeros.data(), sizeof b), 0);
}

TEST(QuantizeQ6_K, LargestScaleMapsToMinus128) {
  const std::vector<float> x = random_row(256, 21);
  block_q6_K b;
  quantize_row_q6_K_ref(x.data(), &b, 256);
  int extreme = 0;
  for (int8_t s : b.scales) extreme += s == -128;
  EXPECT_GE(extreme, 1);  // iscale = -128 / max_scale puts the largest sub-block scale at -128
}

TEST(QuantizeQ6_K, RoundTripError) {
  const int64_t n = 256 * 32;
  const std::vector<float> x = random_row(n, 31);
  std::vector<block_q6_K> q(size_t(n / 256));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row_q6_K_ref(x.data(), q.data(), n);
  dequantize_row_q6_K(q.data(), y.data(), n);
  double err2 = 0.0, x2 = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const block_q6_K& b = q[size_t(i / 256)];
    const int e = int(i % 256);
    const double step = std::fabs(double(fp16_to_fp32(b.d)) * b.scales[e / 16]);
    const double err = std::fabs(double(y[i]) - x[i]);
    // Values requantise to the nearest step of the stored scale: half a step, up to a full step
    // where the fitted scale made them clamp at -32 or 31, plus float rounding.
    const int v = q6_value(b, e) - 32;
    const double steps = (v == -32 || v == 31) ? 1.0 : 0.5;
    ASSERT_LE(err, steps * step + 2 * kU * (std::fabs(x[i]) + std::fabs(y[i]))) << "element " << i;
    err2 += err * err;
    x2 += double(x[i]) * x[i];
  }
  // 6 bits per value with one scale per 16: about 1.8% relative RMS on Gaussian data.
  EXPECT_LT(std::sqrt(err2 / x2), 0.025);
}

// ---- F16 and by-type dispatch -----------------------------------------------------------------

TEST(QuantizeRow, DispatchMatchesTypedFunctions) {
  const int64_t n = 512;
  const std::vector<float> x = random_row(n, 41);
  auto check = [&](GgmlType type, size_t bytes, auto typed_quant, auto typed_dequant) {
    std::vector<uint8_t> a(bytes), b(bytes);
    quantize_row(type, x.data(), a.data(), n);
    typed_quant(b.data());
    EXPECT_EQ(a, b) << int(type);
    std::vector<float> ya(static_cast<size_t>(n)), yb(static_cast<size_t>(n));
    dequantize_row(type, a.data(), ya.data(), n);
    typed_dequant(a.data(), yb.data());
    EXPECT_EQ(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)), 0) << int(type);
  };
  check(
      GgmlType::Q4_0, size_t(n / 32) * sizeof(block_q4_0),
      [&](void* y) { quantize_row_q4_0_ref(x.data(), static_cast<block_q4_0*>(y), n); },
      [&](const void* q, float* y) {
        dequantize_row_q4_0(static_cast<const block_q4_0*>(q), y, n);
      });
  check(
      GgmlType::Q8_0, size_t(n / 32) * sizeof(block_q8_0),
      [&](void* y) { quantize_row_q8_0_ref(x.data(), static_cast<block_q8_0*>(y), n); },
      [&](const void* q, float* y) {
        dequantize_row_q8_0(static_cast<const block_q8_0*>(q), y, n);
      });
  check(
      GgmlType::Q6_K, size_t(n / 256) * sizeof(block_q6_K),
      [&](void* y) { quantize_row_q6_K_ref(x.data(), static_cast<block_q6_K*>(y), n); },
      [&](const void* q, float* y) {
        dequantize_row_q6_K(static_cast<const block_q6_K*>(q), y, n);
      });
  check(
      GgmlType::F16, size_t(n) * 2,
      [&](void* y) {
        for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(y)[i] = fp32_to_fp16(x[size_t(i)]);
      },
      [&](const void* q, float* y) { dequantize_row_f16(static_cast<const uint16_t*>(q), y, n); });
  check(
      GgmlType::F32, size_t(n) * 4, [&](void* y) { std::memcpy(y, x.data(), size_t(n) * 4); },
      [&](const void* q, float* y) { std::memcpy(y, q, size_t(n) * 4); });
}

TEST(QuantizeRow, F16RoundTripIsNearest) {
  const std::vector<float> x = random_row(1000, 51, 100.0f);
  std::vector<uint16_t> h(x.size());
  std::vector<float> y(x.size());
  quantize_row(GgmlType::F16, x.data(), h.data(), int64_t(x.size()));
  dequantize_row(GgmlType::F16, h.data(), y.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    // Half an fp16 ulp (11 significant bits) for normal values.
    EXPECT_LE(std::fabs(double(y[i]) - x[i]), std::ldexp(std::fabs(double(x[i])), -11)) << i;
  }
}

TEST(QuantizeRow, RefusesPartialBlocksAndUnknownTypes) {
  std::vector<float> x(300, 1.0f);
  std::vector<uint8_t> out(4096);
  EXPECT_THROW(quantize_row(GgmlType::Q4_0, x.data(), out.data(), 40), Error);
  EXPECT_THROW(quantize_row(GgmlType::Q6_K, x.data(), out.data(), 288), Error);
  EXPECT_THROW(dequantize_row(GgmlType::Q8_0, out.data(), x.data(), 33), Error);
  EXPECT_THROW(dequantize_row(GgmlType(16), out.data(), x.data(), 256), Error);  // IQ2_XXS
}

}  // namespace
}  // namespace r1pi
