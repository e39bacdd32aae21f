// MXFP4, gpt-oss's expert type, from the facts in shared/data/gptoss/ARCH_FACTS.md section 5
// (written out here, not read from src/ggml): a block is an E8M0 exponent byte e and 16 bytes of
// E2M1 codes, element j < 16 the low nibble of qs[j] and element 16 + j its high nibble; a value
// is E2M1(code) * 2^(e - 127), E2M1 = 0, 0.5, 1, 1.5, 2, 3, 4, 6 with bit 3 the sign (ggml holds
// the levels doubled, as int8, so its -0 is +0). The
// reference quantiser takes e = floor(log2 amax) - 2 + 127 and the nearest level, the first code
// on a tie. The scalar product follows kernels.h's recipe with d_b = 2^(e - 128) * x.d over the
// doubled levels. (Its bytes against ggml's own: tests/llamacpp/ggml_quantizers.cpp; every
// backend against the scalar one: test_kernels_backends.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/quantize.h"
#include "test_support.h"

namespace r1pi {
namespace {

constexpr float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

float e2m1(int code) { return code < 8 ? kE2M1[code] : -kE2M1[code - 8]; }
int code_of(const block_mxfp4& b, int i) { return i < 16 ? b.qs[i] % 16 : b.qs[i - 16] / 16; }

TEST(Mxfp4, TheTypeIsGgmls39In17ByteBlocksOf32) {
  EXPECT_EQ(uint32_t(GgmlType::MXFP4), 39u);
  EXPECT_EQ(ggml_block_elements(GgmlType::MXFP4), 32u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::MXFP4), 17u);
  EXPECT_EQ(ggml_traits(GgmlType::MXFP4).file_type, 38u) << "LLAMA_FTYPE_MOSTLY_MXFP4_MOE";
  EXPECT_EQ(ggml_matrix_type_named("mxfp4"), GgmlType::MXFP4);
}

TEST(Mxfp4, EveryCodeIsE2M1TimesTwoToTheExponentLess127) {
  for (const int e : {0, 1, 2, 100, 127, 128, 200, 254, 255}) {
    block_mxfp4 b{uint8_t(e), {}};
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
    const std::vector<float> y = test::dequantized(GgmlType::MXFP4, &b, 32);
    for (int i = 0; i < 32; ++i) {
      // ldexp is exact here: the smallest, 0.5 * 2^-127, is a float subnormal.
      const float want = std::ldexp(e2m1(code_of(b, i)), e - 127);
      EXPECT_EQ(y[size_t(i)], want) << "e " << e << " element " << i;
      // E2M1's -0 (code 8) comes back +0, as from ggml's levels: int8 has no -0.
      if (want == 0.0f) {
        EXPECT_FALSE(std::signbit(y[size_t(i)])) << "e " << e << " element " << i;
      }
    }
  }
}

TEST(Mxfp4, QuantiserPutsTheLargestMagnitudeInTheTopBinade) {
  std::vector<float> x(32, 0.0f);
  // amax 6: floor(log2 6) = 2, e = 127, scale 2^0: the values are E2M1's own.
  x[0] = 6.0f;     // code 7
  x[1] = 3.0f;     // code 5
  x[2] = -1.5f;    // code 11
  x[3] = 0.25f;    // halfway between 0 and 0.5: the first code, 0
  x[4] = -0.25f;   // halfway between -0 (code 8) and -0.5 (9), but +0 (code 0) is as near: 0
  x[5] = 2.5f;     // halfway between 2 (4) and 3 (5): 4
  x[16] = -5.0f;   // halfway between -4 (14) and -6 (15): 14
  x[17] = 0.74f;   // nearest 0.5 (code 1)
  block_mxfp4 b{};
  quantize_row_mxfp4_ref(x.data(), &b, 32);
  EXPECT_EQ(b.e, 127);
  const int want[32] = {7, 5, 11, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 14, 1};
  for (int i = 0; i < 32; ++i) EXPECT_EQ(code_of(b, i), want[i]) << "element " << i;

  // The exponent follows amax's binade: amax in [4, 8) * 2^k gives e = 127 + k.
  for (const float amax : {4.0f, 7.99f, 0.03125f, 1e-30f, 3e38f}) {
    std::vector<float> y(32, 0.0f);
    y[31] = -amax;
    quantize_row_mxfp4_ref(y.data(), &b, 32);
    EXPECT_EQ(int(b.e), int(std::floor(std::log2(double(amax)))) - 2 + 127) << amax;
  }
  // A block of zeros: exponent 0 and every code +0.
  std::vector<float> zeros(32, 0.0f);
  quantize_row_mxfp4_ref(zeros.data(), &b, 32);
  EXPECT_EQ(b.e, 0);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(b.qs[j], 0) << j;
}

TEST(Mxfp4, QuantiserRoundTripsWithinHalfTheWidestGap) {
  std::mt19937 rng(39);
  const int64_t n = 4096;
  const std::vector<float> x = test::normal_row(n, rng);
  std::vector<block_mxfp4> q(size_t(n / 32));
  quantize_row_mxfp4_ref(x.data(), q.data(), n);
  const std::vector<float> y = test::dequantized(GgmlType::MXFP4, q.data(), n);
  double worst = 0;
  for (int64_t b = 0; b < n / 32; ++b) {
    // The widest gap between levels is 2 (between 4 and 6) at scale 2^(e - 127), and amax lies in
    // [4, 8) of that scale, so values above 6 clip by at most 2 as well: one scale unit either way.
    const double unit = std::ldexp(1.0, int(q[size_t(b)].e) - 127);
    for (int i = 0; i < 32; ++i) {
      const double err = std::fabs(double(y[size_t(32 * b + i)]) - x[size_t(32 * b + i)]);
      worst = std::max(worst, err / unit);
      EXPECT_LE(err, 2.0 * unit) << "block " << b << " element " << i;
    }
  }
  EXPECT_GT(worst, 0.5) << "the bound is not loose by far";
}

// The scalar product: per block and lane j, p = the exact sum over elements 4j .. 4j+3 of
// (2 * E2M1(code)) * x.q, then acc[j] = fma(2^(e - 128) * x.d, p, acc[j]); reduce8 at the end.
TEST(Mxfp4, ScalarDotProductFollowsTheRecipe) {
  std::mt19937 rng(40);
  const int64_t n = 2880;  // gpt-oss's width: 90 blocks
  const std::vector<block_q8_0> x = test::quantize_q8_0(test::normal_row(n, rng));
  const std::vector<float> wf = test::normal_row(n, rng, 0.02f);
  std::vector<block_mxfp4> w(size_t(n / 32));
  quantize_row_mxfp4_ref(wf.data(), w.data(), n);
  float acc[8] = {};
  for (int64_t b = 0; b < n / 32; ++b) {
    const float d = std::ldexp(1.0f, int(w[size_t(b)].e) - 128) * fp16_to_fp32(x[size_t(b)].d);
    for (int j = 0; j < 8; ++j) {
      int32_t p = 0;
      for (int i = 4 * j; i < 4 * j + 4; ++i) p += int32_t(2.0f * e2m1(code_of(w[size_t(b)], i))) * x[size_t(b)].qs[i];
      acc[j] = std::fma(d, float(p), acc[j]);
    }
  }
  const float want = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  test::expect_scalar_dot(GgmlType::MXFP4, n, w.data(), x, want);
}

}  // namespace
}  // namespace r1pi
