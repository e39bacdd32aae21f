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
#include <algorithm>
#include <bit>
#include <cstdint>
#include "neon/kernels.h"
#include "test_support.h"

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


// ---- Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, BF16 -------------------------------------------------
// The 32-element types llama-quantize falls back to (Q4_1, Q5_0, Q5_1, IQ4_NL), IQ4_XS and BF16:
// hand-packed blocks through the dequantisers (extreme scales and mins, every fifth bit, every
// level, every IQ4_XS scale code at 0 and 63 in both of its fields), the quantisers' round trip
// within each type's step, and the scalar dot products against the recipe in kernels.h written
// out again here. The layouts are read from KQUANT_FACTS.md's descriptions, not from
// src/ggml/legacy_layout.h. (Their bytes against ggml's own: tests/llamacpp/ggml_quantizers.cpp.)
namespace legacy {

constexpr int8_t kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

using test::dequantized;

// Element i's 4-bit code in a 16-byte qs: i < 16 the low nibble of byte i, else the high nibble of
// byte i - 16.
int nibble(const uint8_t* qs, int i) { return i < 16 ? qs[i] % 16 : qs[i - 16] / 16; }
// Element i's fifth bit: bit i of the little-endian qh.
int fifth_bit(const uint8_t* qh, int i) { return (qh[i / 8] >> (i % 8)) & 1; }

TEST(LegacyQuants, Q4_1IsScaleTimesNibblePlusMin) {
  for (const float d : {1.0f, -0.5f, 65504.0f, 6.1035156e-05f})
    for (const float m : {0.0f, -3.25f, 1024.0f}) {
      block_q4_1 b{fp32_to_fp16(d), fp32_to_fp16(m), {}};
      for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
      const std::vector<float> y = dequantized(GgmlType::Q4_1, &b, 32);
      for (int i = 0; i < 32; ++i)
        EXPECT_EQ(y[size_t(i)], float(nibble(b.qs, i)) * fp16_to_fp32(b.d) + fp16_to_fp32(b.m)) << i;
      EXPECT_EQ(y[15], 15 * fp16_to_fp32(b.d) + fp16_to_fp32(b.m));
      EXPECT_EQ(y[16], 15 * fp16_to_fp32(b.d) + fp16_to_fp32(b.m));  // element 16: the high nibble of qs[0]
    }
}

TEST(LegacyQuants, Q5_0AndQ5_1TakeTheFifthBitOfEachElementFromQh) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 64; ++trial) {
    block_q5_0 a{};
    block_q5_1 b{};
    a.d = b.d = fp32_to_fp16(trial % 2 ? -0.75f : 2.0f);
    b.m = fp32_to_fp16(-1.5f);
    for (int j = 0; j < 16; ++j) a.qs[j] = b.qs[j] = uint8_t(rng());
    // One bit alone, then random words: every element's fifth bit from its own position.
    const uint32_t qh = trial < 32 ? (1u << trial) : uint32_t(rng());
    std::memcpy(a.qh, &qh, 4);
    std::memcpy(b.qh, &qh, 4);
    const std::vector<float> ya = dequantized(GgmlType::Q5_0, &a, 32), yb = dequantized(GgmlType::Q5_1, &b, 32);
    for (int i = 0; i < 32; ++i) {
      const int q = nibble(a.qs, i) + 16 * fifth_bit(a.qh, i);
      EXPECT_EQ(ya[size_t(i)], float(q - 16) * fp16_to_fp32(a.d)) << trial << " " << i;
      EXPECT_EQ(yb[size_t(i)], float(q) * fp16_to_fp32(b.d) + fp16_to_fp32(b.m)) << trial << " " << i;
    }
  }
}

TEST(LegacyQuants, Iq4NlMapsEveryCodeToItsLevel) {
  block_iq4_nl b{fp32_to_fp16(-0.125f), {}};
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
  const std::vector<float> y = dequantized(GgmlType::IQ4_NL, &b, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[size_t(i)], -0.125f * kLevels[nibble(b.qs, i)]) << i;
}

TEST(LegacyQuants, Iq4XsScalesAreSixBitsSplitOverTwoFields) {
  // Sub-block b's scale: low 4 bits the nibble b % 2 of scales_l[b / 2], high 2 bits bits 2b, 2b+1
  // of scales_h; the factor is scale - 32.
  for (const int pattern : {0, 1, 2, 3}) {
    int codes[8];
    block_iq4_xs x{};
    x.d = fp32_to_fp16(0.5f);
    for (int b = 0; b < 8; ++b) {
      codes[b] = pattern == 0 ? 0 : pattern == 1 ? 63 : pattern == 2 ? (b % 2 ? 63 : 0) : 8 * b + 3;
      x.scales_l[b / 2] = uint8_t(x.scales_l[b / 2] | ((codes[b] % 16) << (4 * (b % 2))));
      x.scales_h = uint16_t(x.scales_h | ((codes[b] / 16) << (2 * b)));
    }
    for (int j = 0; j < 128; ++j) x.qs[j] = uint8_t((j * 7) ^ (j >> 3));
    const std::vector<float> y = dequantized(GgmlType::IQ4_XS, &x, 256);
    for (int b = 0; b < 8; ++b)
      for (int i = 0; i < 32; ++i)
        EXPECT_EQ(y[size_t(32 * b + i)], 0.5f * float(codes[b] - 32) * kLevels[nibble(x.qs + 16 * b, i)])
            << "pattern " << pattern << " sub-block " << b << " element " << i;
  }
}

TEST(LegacyQuants, Bf16RoundsToNearestEvenAndKeepsNaN) {
  const std::vector<float> x = {1.0f, -2.5f, 1.00390625f /* halfway: to even (1.0) */,
                                1.01171875f /* halfway: to even (1.015625) */, 3.4028235e38f, INFINITY, -0.0f};
  std::vector<uint16_t> h(x.size());
  ggml_traits(GgmlType::BF16).quantize(x.data(), h.data(), int64_t(x.size()));
  const std::vector<float> y = dequantized(GgmlType::BF16, h.data(), int64_t(x.size()));
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.5f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 1.015625f);
  EXPECT_TRUE(std::isinf(y[4])) << "the largest float rounds up to infinity, as ggml's conversion";
  EXPECT_EQ(y[5], INFINITY);
  EXPECT_TRUE(std::signbit(y[6]));
  const float nan = std::nanf("");
  uint16_t hn;
  ggml_traits(GgmlType::BF16).quantize(&nan, &hn, 1);
  EXPECT_TRUE(std::isnan(dequantized(GgmlType::BF16, &hn, 1)[0]));
}

// Every value comes back within the type's step (plus fp16 rounding of its scale and min).
TEST(LegacyQuants, QuantisersRoundTripWithinTheirStep) {
  std::mt19937 rng(37);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                              GgmlType::BF16}) {
    const int64_t n = 1024;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    std::vector<uint8_t> q(ggml_row_bytes(type, n));
    ggml_traits(type).quantize(x.data(), q.data(), n);
    const std::vector<float> y = dequantized(type, q.data(), n);
    double worst = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
      float lo = x[size_t(32 * b)], hi = lo, amax = 0;
      for (int i = 0; i < 32; ++i) {
        lo = std::min(lo, x[size_t(32 * b + i)]);
        hi = std::max(hi, x[size_t(32 * b + i)]);
        amax = std::max(amax, std::fabs(x[size_t(32 * b + i)]));
      }
      // Half a step of the type's grid over the block (Q5_0: a whole step, as its levels -16..15
      // reach one step less on the side opposite the largest value; IQ4: half the widest gap
      // between levels, 24 of 127 steps of amax / 127; IQ4_XS's 6-bit block scales add up to a
      // sixty-fourth).
      const double bound = type == GgmlType::Q4_1   ? (hi - lo) / 15 * 0.5 + 1e-3 * (hi - lo + std::fabs(lo))
                           : type == GgmlType::Q5_0 ? amax / 16 + 1e-3 * amax
                           : type == GgmlType::Q5_1 ? (hi - lo) / 31 * 0.5 + 1e-3 * (hi - lo + std::fabs(lo))
                           : type == GgmlType::BF16 ? amax / 256.0
                                                    : amax * (12.0 / 127 + 1.0 / 32) * 1.1;
      for (int i = 0; i < 32; ++i) {
        const double err = std::fabs(double(y[size_t(32 * b + i)]) - x[size_t(32 * b + i)]);
        worst = std::max(worst, err / bound);
        EXPECT_LE(err, bound) << ggml_type_name(type) << " block " << b << " element " << i;
      }
    }
    EXPECT_GT(worst, 0.2) << ggml_type_name(type) << ": the bound is not loose by far";
  }
}

// The scalar dot products follow kernels.h's recipe, written out here from the dequantisation
// facts: Q5_0 and IQ4_NL as Q4_0 with their integer weights; IQ4_XS with (d * x.d) * (scale - 32)
// per block; Q4_1 and Q5_1 with the q part of eight blocks, then (m * x.d) * sum(x.q) per lane.
TEST(LegacyQuants, ScalarDotProductsFollowTheRecipe) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 896;  // 28 blocks: Qwen2.5-0.5B's rows, a partial last group of eight blocks
  std::vector<float> xf(static_cast<size_t>(n));
  for (float& v : xf) v = normal(rng);
  std::vector<block_q8_0> x(size_t(n / 32));
  quantize_row_q8_0_ref(xf.data(), x.data(), n);
  auto reduce8 = [](const float* a) { return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])); };
  for (const GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL}) {
    std::vector<float> wf(static_cast<size_t>(n));
    for (float& v : wf) v = normal(rng);
    std::vector<uint8_t> w(ggml_row_bytes(type, n));
    ggml_traits(type).quantize(wf.data(), w.data(), n);
    const size_t bb = ggml_block_bytes(type);
    float acc[8] = {};
    for (int64_t g = 0; g < n / 32; g += 8) {
      const int64_t end = std::min<int64_t>(n / 32, g + 8);
      for (int64_t b = g; b < end; ++b) {
        const uint8_t* blk = w.data() + size_t(b) * bb;
        const uint8_t* qh = type == GgmlType::Q5_0 ? blk + 2 : type == GgmlType::Q5_1 ? blk + 4 : nullptr;
        const uint8_t* qs = blk + (type == GgmlType::Q4_1 ? 4 : type == GgmlType::Q5_0 ? 6 : type == GgmlType::Q5_1 ? 8 : 2);
        uint16_t d;
        std::memcpy(&d, blk, 2);
        for (int j = 0; j < 8; ++j) {
          int32_t p = 0;
          for (int i = 4 * j; i < 4 * j + 4; ++i) {
            int q = nibble(qs, i) + (qh ? 16 * fifth_bit(qh, i) : 0);
            if (type == GgmlType::Q5_0) q -= 16;
            if (type == GgmlType::IQ4_NL) q = kLevels[q];
            p += q * x[size_t(b)].qs[i];
          }
          acc[j] = std::fma(fp16_to_fp32(d) * fp16_to_fp32(x[size_t(b)].d), float(p), acc[j]);
        }
      }
      if (type == GgmlType::Q4_1 || type == GgmlType::Q5_1)
        for (int64_t b = g; b < end; ++b) {
          uint16_t m;
          std::memcpy(&m, w.data() + size_t(b) * bb + 2, 2);
          int32_t sum = 0;
          for (int i = 0; i < 32; ++i) sum += x[size_t(b)].qs[i];
          acc[b - g] = std::fma(fp16_to_fp32(m) * fp16_to_fp32(x[size_t(b)].d), float(sum), acc[b - g]);
        }
    }
    test::expect_scalar_dot(type, n, w.data(), x, reduce8(acc));
  }
}

}  // namespace legacy

}  // namespace
}  // namespace r1pi
