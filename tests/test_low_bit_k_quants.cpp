// Q2_K and Q3_K (16 sub-blocks of 16): hand-packed blocks through the dequantisers (every scale and
// min nibble, every Q3_K scale code from 0 to 63 in both of its fields, every high bit), the
// quantisers' round trip, and the scalar dot products against kernels.h's recipe written out again
// here. The layouts are read from KQUANT_FACTS.md's descriptions, not from src/ggml/q23_K_layout.h.
// (Their bytes against ggml's own: tests/llamacpp/ggml_quantizers.cpp.)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/quantize.h"
#include "neon/kernels.h"

namespace r1pi {
namespace {

// Element e of a super-block: half h = e / 128, j = (e % 128) / 32, l = e % 32 reads bits 2j of
// qs[32h + l]; its sub-block is e / 16; Q3_K's high bit is bit 4h + j of hmask[l].
int low_bits(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
int high_bit(const uint8_t* hmask, int e) { return (hmask[e % 32] >> (4 * (e / 128) + (e % 128) / 32)) & 1; }
// Q3_K sub-block s's 6-bit code: low 4 bits in scales[s] (s < 8) or scales[s - 8] >> 4, high 2 bits
// at bit 2 (s / 4) of scales[8 + s % 4].
int q3_code(const uint8_t* sc, int s) {
  return (s < 8 ? sc[s] % 16 : sc[s - 8] / 16) + 16 * ((sc[8 + s % 4] >> (2 * (s / 4))) & 3);
}
void set_q3_code(uint8_t* sc, int s, int code) {
  if (s < 8) sc[s] = uint8_t(sc[s] + code % 16);
  else sc[s - 8] = uint8_t(sc[s - 8] + 16 * (code % 16));
  sc[8 + s % 4] = uint8_t(sc[8 + s % 4] + ((code / 16) << (2 * (s / 4))));
}

std::vector<float> dequantized(GgmlType type, const void* blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  ggml_traits(type).dequantize(blocks, y.data(), n);
  return y;
}

TEST(LowBitKQuants, Q2_KIsScaleTimesQuantMinusMinPerSixteen) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 4; ++trial) {
    block_q2_K b{};
    b.d = fp32_to_fp16(trial % 2 ? -0.25f : 1.5f);
    b.dmin = fp32_to_fp16(trial < 2 ? 0.75f : -2.0f);
    for (int s = 0; s < 16; ++s) b.scales[s] = uint8_t(trial == 0 ? (s | (15 - s) << 4) : rng());
    for (uint8_t& q : b.qs) q = uint8_t(rng());
    const std::vector<float> y = dequantized(GgmlType::Q2_K, &b, 256);
    for (int e = 0; e < 256; ++e) {
      const int s = e / 16;
      const float want = fp16_to_fp32(b.d) * float(b.scales[s] % 16) * float(low_bits(b.qs, e)) -
                         fp16_to_fp32(b.dmin) * float(b.scales[s] / 16);
      EXPECT_EQ(y[size_t(e)], want) << trial << " element " << e;
    }
  }
}

TEST(LowBitKQuants, Q3_KScaleCodesAndHighBits) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 4; ++trial) {
    block_q3_K b{};
    b.d = fp32_to_fp16(trial % 2 ? -0.5f : 0.125f);
    for (int s = 0; s < 16; ++s) set_q3_code(b.scales, s, trial == 0 ? 4 * s + 3 : trial == 1 ? (s % 2 ? 63 : 0) : int(rng() % 64));
    for (int s = 0; s < 16; ++s) ASSERT_EQ(q3_code(b.scales, s), trial == 0 ? 4 * s + 3 : q3_code(b.scales, s));
    for (uint8_t& q : b.qs) q = uint8_t(rng());
    for (uint8_t& h : b.hmask) h = uint8_t(trial == 3 ? 0 : rng());
    const std::vector<float> y = dequantized(GgmlType::Q3_K, &b, 256);
    for (int e = 0; e < 256; ++e) {
      const int q = low_bits(b.qs, e) - (high_bit(b.hmask, e) ? 0 : 4);
      EXPECT_EQ(y[size_t(e)], fp16_to_fp32(b.d) * float(q3_code(b.scales, e / 16) - 32) * float(q))
          << trial << " element " << e;
    }
  }
}

TEST(LowBitKQuants, QuantisersRoundTripNearTheRow) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1024);
  for (float& v : x) v = normal(rng);
  for (auto [type, bound] : {std::pair{GgmlType::Q2_K, 0.45}, {GgmlType::Q3_K, 0.25}}) {
    std::vector<uint8_t> q(ggml_row_bytes(type, 1024));
    ggml_traits(type).quantize(x.data(), q.data(), 1024);
    const std::vector<float> y = dequantized(type, q.data(), 1024);
    double err = 0, norm = 0;
    for (size_t i = 0; i < x.size(); ++i) err += (y[i] - x[i]) * (y[i] - x[i]), norm += x[i] * x[i];
    EXPECT_LT(std::sqrt(err / norm), bound) << ggml_type_name(type) << ": relative RMS error";
    EXPECT_GT(std::sqrt(err / norm), 0.01) << ggml_type_name(type);
  }
  std::vector<float> zeros(256, 0.0f), back;
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K}) {
    std::vector<uint8_t> q(ggml_row_bytes(type, 256));
    ggml_traits(type).quantize(zeros.data(), q.data(), 256);
    back = dequantized(type, q.data(), 256);
    for (float v : back) EXPECT_EQ(v, 0.0f) << ggml_type_name(type);
  }
}

// Q3_K: per 32-element block k, lane j's integer sum times (code - 32) of its sub-block, then
// fma(d * x.d, p). Q2_K: the same with the 4-bit scale, then lane k takes -(dmin * x_k.d) times
// (min_2k * sum of x_k's first 16 quants + min_2k+1 * sum of its last 16).
TEST(LowBitKQuants, ScalarDotProductsFollowTheRecipe) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 512;
  std::vector<float> xf(static_cast<size_t>(n)), wf(static_cast<size_t>(n));
  for (float& v : xf) v = normal(rng);
  for (float& v : wf) v = normal(rng);
  std::vector<block_q8_0> x(size_t(n / 32));
  quantize_row_q8_0_ref(xf.data(), x.data(), n);
  auto reduce8 = [](const float* a) { return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])); };
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K}) {
    std::vector<uint8_t> w(ggml_row_bytes(type, n));
    ggml_traits(type).quantize(wf.data(), w.data(), n);
    float acc[8] = {};
    for (int64_t sb = 0; sb < n / 256; ++sb) {
      const uint8_t* blk = w.data() + size_t(sb) * ggml_block_bytes(type);
      const block_q8_0* xs = x.data() + sb * 8;
      for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 8; ++j) {
          int32_t p = 0;
          int scale = 0;
          for (int i = 4 * j; i < 4 * j + 4; ++i) {
            const int e = 32 * k + i;
            int q;
            if (type == GgmlType::Q2_K) {
              q = low_bits(blk + 16, e);
              scale = blk[e / 16] % 16;
            } else {
              q = low_bits(blk + 32, e) - (high_bit(blk, e) ? 0 : 4);
              scale = q3_code(blk + 96, e / 16) - 32;
            }
            p += q * xs[k].qs[i];
          }
          uint16_t d;
          std::memcpy(&d, blk + (type == GgmlType::Q2_K ? 80 : 108), 2);
          acc[j] = std::fma(fp16_to_fp32(d) * fp16_to_fp32(xs[k].d), float(p * scale), acc[j]);
        }
      if (type == GgmlType::Q2_K) {
        uint16_t dmin;
        std::memcpy(&dmin, blk + 82, 2);
        for (int k = 0; k < 8; ++k) {
          int32_t lo = 0, hi = 0;
          for (int i = 0; i < 16; ++i) lo += xs[k].qs[i], hi += xs[k].qs[16 + i];
          const int32_t m = (blk[2 * k] / 16) * lo + (blk[2 * k + 1] / 16) * hi;
          acc[k] = std::fma(-(fp16_to_fp32(dmin) * fp16_to_fp32(xs[k].d)), float(m), acc[k]);
        }
      }
    }
    const float want = reduce8(acc);
    const float got = kernels_scalar().types[kernel_type_index(type)].vec_dot(n, w.data(), x.data());
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << ggml_type_name(type);
    const std::vector<float> wd = dequantized(type, w.data(), n), xd = dequantized(GgmlType::Q8_0, x.data(), n);
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) exact += double(wd[size_t(i)]) * xd[size_t(i)];
    EXPECT_NEAR(got, exact, 1e-3 * (1 + std::fabs(exact))) << ggml_type_name(type);
  }
}

}  // namespace
}  // namespace r1pi
