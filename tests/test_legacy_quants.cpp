// The 32-element types llama-quantize falls back to (Q4_1, Q5_0, Q5_1, IQ4_NL), IQ4_XS and BF16:
// hand-packed blocks through the dequantisers (extreme scales and mins, every fifth bit, every
// level, every IQ4_XS scale code at 0 and 63 in both of its fields), the quantisers' round trip
// within each type's step, and the scalar dot products against the recipe in kernels.h written
// out again here. The layouts are read from KQUANT_FACTS.md's descriptions, not from
// src/ggml/legacy_layout.h. (Their bytes against ggml's own: tests/llamacpp/ggml_quantizers.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/quantize.h"
#include "neon/kernels.h"
#include "test_support.h"

namespace r1pi {
namespace {

constexpr int8_t kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

std::vector<float> dequantized(GgmlType type, const void* blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  ggml_traits(type).dequantize(blocks, y.data(), n);
  return y;
}

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
    const float want = reduce8(acc);
    const float got = kernels_scalar().types[kernel_type_index(type)].vec_dot(n, w.data(), x.data());
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << ggml_type_name(type);
    // And near the double-precision product of the dequantised rows.
    const std::vector<float> wd = dequantized(type, w.data(), n), xd = dequantized(GgmlType::Q8_0, x.data(), n);
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) exact += double(wd[size_t(i)]) * xd[size_t(i)];
    EXPECT_NEAR(got, exact, 1e-3 * (1 + std::fabs(exact))) << ggml_type_name(type);
  }
}

}  // namespace
}  // namespace r1pi
