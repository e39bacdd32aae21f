// The scalar reference kernels. Each dot product is checked twice: bit for bit against a
// straightforward re-implementation of the recipe in kernels.h, and against a double-precision
// sum of the dequantised values within the rounding bound the recipe implies. The float kernels
// are checked against double references with bounds derived from their operation counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "ggml/fp16.h"
#include "neon/kernels.h"
#include "ggml/quantize.h"
#include "ggml/round_even.h"
#include "kernel_recipe.h"
#include "test_support.h"

namespace r1pi {
namespace {

const Kernels& K() { return kernels_scalar(); }
// The scalar reference's own entry for a weight type.
const TypeKernels& K(GgmlType t) { return K().types[kernel_type_index(t)]; }

using namespace test;  // kernel_recipe.h, test_support.h

int q4_value(const block_q4_0& b, int j) {
  return (j < 16 ? b.qs[j] & 0xF : b.qs[j - 16] >> 4) - 8;
}

int q6_value(const block_q6_K& b, int e) {
  const int h = e / 128, g = (e % 128) / 32, l = e % 32;
  const uint8_t byte = b.ql[64 * h + l + 32 * (g & 1)];
  const int low = g < 2 ? byte & 0xF : byte >> 4;
  return (low | (((b.qh[32 * h + l] >> (2 * g)) & 3) << 4)) - 32;
}

// ---- quantised dot products -----------------------------------------------------------------

TEST(KernelsScalar, TableIsComplete) {
  EXPECT_STREQ(K().name, "scalar");
  EXPECT_EQ(K().quantize_row_q8_0, &quantize_row_q8_0_ref);
  for (GgmlType t : kKernelTypes) {
    EXPECT_NE(K(t).vec_dot, nullptr) << ggml_type_name(t);
    EXPECT_NE(K(t).matmul, nullptr) << ggml_type_name(t);
  }
  EXPECT_NE(K().vec_dot_f32, nullptr);
  EXPECT_NE(K().rmsnorm, nullptr);
  EXPECT_NE(K().softmax, nullptr);
  EXPECT_NE(K().silu_mul, nullptr);
  EXPECT_NE(K().rope, nullptr);
  EXPECT_NE(K().rope_neox, nullptr);
  EXPECT_NE(K().axpy, nullptr);
}

TEST(KernelsScalar, DotQ8_0HandComputed) {
  // Nine blocks of w = 2, x = 3 with unit scales: 9 * 32 * 6 = 1728 exactly.
  std::vector<block_q8_0> w(9), x(9);
  for (int b = 0; b < 9; ++b) {
    w[b].d = x[b].d = fp32_to_fp16(1.0f);
    for (int j = 0; j < 32; ++j) {
      w[b].qs[j] = 2;
      x[b].qs[j] = 3;
    }
  }
  EXPECT_EQ(K(GgmlType::Q8_0).vec_dot(9 * 32, w.data(), x.data()), 1728.0f);
}

TEST(KernelsScalar, DotQ4_0) {
  for (int64_t n : {32, 64, 96, 8 * 32 + 32, 1056, 4096 + 32}) {
    const std::vector<float> wf = random_row(n, uint32_t(n), 0.5f);
    const std::vector<float> xf = random_row(n, uint32_t(n) + 1, 2.0f);
    std::vector<block_q4_0> w(static_cast<size_t>(n / 32));
    quantize_row_q4_0_ref(wf.data(), w.data(), n);
    const std::vector<block_q8_0> x = quantize_q8_0(xf);
    const float got = K(GgmlType::Q4_0).vec_dot(n, w.data(), x.data());

    const float want = recipe_quant_dot(
        n / 32, [&](int64_t b) { return fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d); },
        [&](int64_t b, int i) { return q4_value(w[b], i) * x[b].qs[i]; });
    EXPECT_TRUE(same_bits(got, want)) << "n=" << n << " got " << got << " want " << want;

    // Dequantised products are exact in double, so only the float accumulation differs.
    const Reference ref =
        reference_dot(dequant(GgmlType::Q4_0, w.data(), n), dequant(GgmlType::Q8_0, x.data(), n));
    EXPECT_LE(std::fabs(got - ref.value), quant_accumulation_bound(n) * ref.abs_sum) << "n=" << n;
  }
}

TEST(KernelsScalar, DotQ8_0) {
  for (int64_t n : {32, 64, 96, 8 * 32 + 32, 1056, 4096 + 32}) {
    const std::vector<float> wf = random_row(n, uint32_t(n) + 2, 0.3f);
    const std::vector<float> xf = random_row(n, uint32_t(n) + 3, 5.0f);
    const std::vector<block_q8_0> w = quantize_q8_0(wf);
    const std::vector<block_q8_0> x = quantize_q8_0(xf);
    const float got = K(GgmlType::Q8_0).vec_dot(n, w.data(), x.data());

    const float want = recipe_quant_dot(
        n / 32, [&](int64_t b) { return fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d); },
        [&](int64_t b, int i) { return w[b].qs[i] * x[b].qs[i]; });
    EXPECT_TRUE(same_bits(got, want)) << "n=" << n << " got " << got << " want " << want;

    const Reference ref =
        reference_dot(dequant(GgmlType::Q8_0, w.data(), n), dequant(GgmlType::Q8_0, x.data(), n));
    EXPECT_LE(std::fabs(got - ref.value), quant_accumulation_bound(n) * ref.abs_sum) << "n=" << n;
  }
}

TEST(KernelsScalar, DotQ6_K) {
  for (int64_t n : {256, 512, 9 * 256}) {
    const std::vector<float> wf = random_row(n, uint32_t(n) + 4, 0.2f);
    const std::vector<float> xf = random_row(n, uint32_t(n) + 5, 3.0f);
    std::vector<block_q6_K> w(static_cast<size_t>(n / 256));
    quantize_row_q6_K_ref(wf.data(), w.data(), n);
    const std::vector<block_q8_0> x = quantize_q8_0(xf);
    const float got = K(GgmlType::Q6_K).vec_dot(n, w.data(), x.data());

    // Block b is elements 32 (b % 8) .. +31 of super-block b / 8; element e has scale e / 16.
    const float want = recipe_quant_dot(
        n / 32, [&](int64_t b) { return fp16_to_fp32(w[b / 8].d) * fp16_to_fp32(x[b].d); },
        [&](int64_t b, int i) {
          const int e = 32 * int(b % 8) + i;
          return w[b / 8].scales[e / 16] * q6_value(w[b / 8], e) * x[b].qs[i];
        });
    EXPECT_TRUE(same_bits(got, want)) << "n=" << n << " got " << got << " want " << want;

    // Dequantised Q6_K values, (d * scale) * q, are rounded once more: one extra u.
    const Reference ref =
        reference_dot(dequant(GgmlType::Q6_K, w.data(), n), dequant(GgmlType::Q8_0, x.data(), n));
    const double bound = (quant_accumulation_bound(n) + 1.01 * kU) * ref.abs_sum;
    EXPECT_LE(std::fabs(got - ref.value), bound) << "n=" << n;
  }
}

// ---- float dot products ---------------------------------------------------------------------

TEST(KernelsScalar, DotF32) {
  for (int64_t n : {0, 1, 7, 8, 13, 100, 1001, 4099}) {
    const std::vector<float> a = random_row(n, uint32_t(n) + 6);
    const std::vector<float> b = random_row(n, uint32_t(n) + 7);
    const float got = K().vec_dot_f32(n, a.data(), b.data());
    EXPECT_TRUE(same_bits(got, recipe_float_dot(n, a.data(), b.data()))) << "n=" << n;
    const Reference ref = reference_dot(a, b);
    EXPECT_LE(std::fabs(got - ref.value), accumulation_bound(n) * ref.abs_sum) << "n=" << n;
  }
}

TEST(KernelsScalar, DotF16F32) {
  for (int64_t n : {1, 7, 13, 100, 1001}) {
    const std::vector<float> wf = random_row(n, uint32_t(n) + 8, 0.1f);
    const std::vector<float> x = random_row(n, uint32_t(n) + 9);
    std::vector<uint16_t> w(static_cast<size_t>(n));
    quantize_row(GgmlType::F16, wf.data(), w.data(), n);
    const std::vector<float> wd = dequant(GgmlType::F16, w.data(), n);
    const float got = K(GgmlType::F16).vec_dot(n, w.data(), x.data());
    EXPECT_TRUE(same_bits(got, recipe_float_dot(n, wd.data(), x.data()))) << "n=" << n;
    const Reference ref = reference_dot(wd, x);
    EXPECT_LE(std::fabs(got - ref.value), accumulation_bound(n) * ref.abs_sum) << "n=" << n;
  }
}

// ---- exp -------------------------------------------------------------------------------------

TEST(KernelsScalar, RoundEvenMatchesNearbyint) {
  for (int k = -300; k <= 300; ++k) {
    for (float v :
         {float(k), k + 0.5f, k - 0.5f, k + 0.25f, k + 0.75f, std::nextafter(k + 0.5f, 0.0f)}) {
      ASSERT_EQ(int(round_even(v)), int(std::nearbyint(v))) << v;
    }
  }
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-4e6f, 4e6f);
  for (int i = 0; i < 100000; ++i) {
    const float v = u(rng);
    ASSERT_EQ(int(round_even(v)), int(std::nearbyint(v))) << v;
  }
}

TEST(KernelsScalar, ExpSpecialValues) {
  EXPECT_EQ(expf_r1pi(0.0f), 1.0f);
  EXPECT_EQ(expf_r1pi(-0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(expf_r1pi(NAN)));
  EXPECT_EQ(expf_r1pi(-INFINITY), 0.0f);
  EXPECT_EQ(expf_r1pi(INFINITY), INFINITY);
  EXPECT_EQ(expf_r1pi(-87.31f), 0.0f);
  EXPECT_EQ(expf_r1pi(-1000.0f), 0.0f);
  EXPECT_GE(expf_r1pi(-87.3f), FLT_MIN);  // the smallest input still gives a normal float
  EXPECT_LE(expf_r1pi(88.7f), FLT_MAX);
  EXPECT_EQ(expf_r1pi(88.71f), INFINITY);
  EXPECT_NEAR(expf_r1pi(1.0f), 2.718281828f, 3e-7);
}

// Error of f against the exact value e, in units of the float ulp at e.
double ulp_error(float f, double e) {
  int exponent;
  std::frexp(e, &exponent);
  return std::fabs(f - e) / std::ldexp(1.0, exponent - 24);
}

TEST(KernelsScalar, ExpAccuracy) {
  // Every 61st float in [-87, 88] (a full sweep, run once, measured 0.94 ulp at x = 26.688921).
  double worst = 0.0;
  float worst_x = 0.0f;
  auto sweep = [&](float from, float to) {
    uint32_t lo, hi;
    std::memcpy(&lo, &from, 4);
    std::memcpy(&hi, &to, 4);
    for (uint32_t u = lo; u <= hi; u += 61) {
      float x;
      std::memcpy(&x, &u, 4);
      const double err = ulp_error(expf_r1pi(x), std::exp(double(x)));
      if (err > worst) {
        worst = err;
        worst_x = x;
      }
    }
  };
  sweep(0.0f, 88.0f);
  sweep(-0.0f, -87.0f);  // negative floats: bit patterns grow with magnitude
  std::printf("expf_r1pi: max error %.3f ulp at x = %.9g\n", worst, double(worst_x));
  EXPECT_LE(worst, 1.0);
}

// ---- float kernels ---------------------------------------------------------------------------

TEST(KernelsScalar, RmsNorm) {
  const float eps = 1e-5f;
  for (int64_t n : {1, 13, 100, 4096}) {
    const std::vector<float> x = random_row(n, uint32_t(n) + 10, 3.0f);
    const std::vector<float> w = random_row(n, uint32_t(n) + 11);
    std::vector<float> out(static_cast<size_t>(n));
    K().rmsnorm(out.data(), x.data(), w.data(), n, eps);

    // Bit for bit: the recipe in kernels.h.
    const float scale = 1.0f / std::sqrt(recipe_float_dot(n, x.data(), x.data()) / float(n) + eps);
    double ss = 0.0;
    for (float v : x) ss += double(v) * v;
    const double ref_scale = 1.0 / std::sqrt(ss / double(n) + eps);
    // ss is a positive sum (relative error accumulation_bound), halved by the square root; then
    // the division by n, + eps, sqrt, 1/., and the two products each round once.
    const double tol = 0.5 * accumulation_bound(n) + 6 * kU;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(same_bits(out[i], (x[i] * scale) * w[i])) << "n=" << n << " i=" << i;
      const double ref = double(x[i]) * w[i] * ref_scale;
      ASSERT_LE(std::fabs(out[i] - ref), tol * std::fabs(ref)) << "n=" << n << " i=" << i;
    }
  }
}

TEST(KernelsScalar, Softmax) {
  for (int64_t n : {1, 5, 100, 1000}) {
    std::vector<float> x = random_row(n, uint32_t(n) + 12, 4.0f);
    const std::vector<float> in = x;
    K().softmax(x.data(), n);
    if (n == 1) {
      EXPECT_EQ(x[0], 1.0f);
    }

    float m = in[0];
    for (float v : in) m = std::max(m, v);
    double sum_exact = 0.0, sum_out = 0.0, max_gap = 0.0;
    for (float v : in) {
      sum_exact += std::exp(double(v) - m);
      max_gap = std::max(max_gap, double(m) - v);
    }
    for (float v : x) sum_out += v;
    // Bit for bit: the recipe in kernels.h.
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::vector<float> e(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      e[i] = expf_r1pi(in[i] - m);
      acc[i % 8] += e[i];
    }
    const float inv = 1.0f / recipe_reduce8(acc);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(same_bits(x[i], e[i] * inv)) << "n=" << n << " i=" << i;
    }
    // The float exps are summed (accumulation_bound), inverted and multiplied: the outputs sum
    // to 1 within those roundings whatever the exp error.
    EXPECT_LE(std::fabs(sum_out - 1.0), accumulation_bound(n) + 2 * kU) << "n=" << n;
    // Against double: x - m rounds (relative u |x - m| after exp), exp is within 1 ulp (2u),
    // and the sum carries the worst of those plus its accumulation error.
    const double sum_tol = kU * max_gap + 2 * kU + accumulation_bound(n);
    for (int64_t i = 0; i < n; ++i) {
      const double gap = double(m) - in[i];
      const double ref = std::exp(-gap) / sum_exact;
      const double tol = kU * gap + 2 * kU + sum_tol + 2 * kU;
      ASSERT_LE(std::fabs(x[i] - ref), tol * ref) << "n=" << n << " i=" << i;
    }
  }
}

TEST(KernelsScalar, SiluMul) {
  const int64_t n = 2000;
  std::vector<float> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) g[i] = -100.0f + 200.0f * float(i) / float(n - 1);
  const std::vector<float> extra = random_row(200, 13, 2.0f);
  g.insert(g.end(), extra.begin(), extra.end());
  const std::vector<float> u = random_row(int64_t(g.size()), 14);
  const std::vector<float> in = g;
  K().silu_mul(g.data(), u.data(), int64_t(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_TRUE(same_bits(g[i], (in[i] / (1.0f + expf_r1pi(-in[i]))) * u[i])) << "g=" << in[i];
    const double ref = double(in[i]) / (1.0 + std::exp(-double(in[i]))) * u[i];
    // exp within 2u, then 1 + e, the division and the product: 5u relative. The exp cutoffs
    // (0 below -87.3, inf above 88.7) change results only below 1e-35 in magnitude.
    ASSERT_LE(std::fabs(g[i] - ref), 5 * kU * std::fabs(ref) + 1e-35) << "g=" << in[i];
  }
}

TEST(KernelsScalar, Rope) {
  const int64_t n_heads = 4, head_dim = 64, pos = 17;
  std::vector<float> cos(head_dim / 2), sin(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const double theta = double(pos) * std::pow(10000.0, -2.0 * double(i) / double(head_dim));
    cos[i] = float(std::cos(theta));
    sin[i] = float(std::sin(theta));
  }
  std::vector<float> x = random_row(n_heads * head_dim, 15);
  const std::vector<float> in = x;
  K().rope(x.data(), n_heads, head_dim, cos.data(), sin.data());
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      const size_t k = size_t(h * head_dim + 2 * i);
      ASSERT_TRUE(same_bits(x[k], in[k] * cos[i] - in[k + 1] * sin[i]));
      ASSERT_TRUE(same_bits(x[k + 1], in[k] * sin[i] + in[k + 1] * cos[i]));
      const double x0 = in[k], x1 = in[k + 1], c = cos[i], s = sin[i];
      // Each output is a difference (or sum) of two rounded products, rounded: 2u of the terms.
      const double ref0 = x0 * c - x1 * s, ref1 = x0 * s + x1 * c;
      const double mag =
          std::fabs(x0 * c) + std::fabs(x1 * s) + std::fabs(x0 * s) + std::fabs(x1 * c);
      ASSERT_LE(std::fabs(x[k] - ref0), 2.01 * kU * mag) << h << "," << i;
      ASSERT_LE(std::fabs(x[k + 1] - ref1), 2.01 * kU * mag) << h << "," << i;
      // The rotation keeps the pair's norm (scaled by the float c^2 + s^2) to rounding.
      const double norm_in = (x0 * x0 + x1 * x1) * (c * c + s * s);
      const double norm_out = double(x[k]) * x[k] + double(x[k + 1]) * x[k + 1];
      ASSERT_LE(std::fabs(norm_out - norm_in), 12 * kU * norm_in) << h << "," << i;
    }
  }
}

// NEOX pairs each element of a head's first half with the one half a head later, with the same
// two products per output as the adjacent layout, so its results are the adjacent layout's on the
// pairs moved side by side.
TEST(KernelsScalar, RopeNeoxRotatesHalves) {
  const int64_t n_heads = 3, head_dim = 128, half = head_dim / 2;
  std::vector<float> cos(half), sin(half);
  for (int64_t i = 0; i < half; ++i) {
    const double theta = 29.0 * std::pow(1e6, -2.0 * double(i) / double(head_dim));
    cos[i] = float(std::cos(theta));
    sin[i] = float(std::sin(theta));
  }
  std::vector<float> x = random_row(n_heads * head_dim, 21);
  std::vector<float> paired(x.size());  // x with each head's (i, i + half) moved to (2i, 2i + 1)
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < half; ++i) {
      paired[size_t(h * head_dim + 2 * i)] = x[size_t(h * head_dim + i)];
      paired[size_t(h * head_dim + 2 * i + 1)] = x[size_t(h * head_dim + i + half)];
    }
  K().rope_neox(x.data(), n_heads, head_dim, cos.data(), sin.data());
  K().rope(paired.data(), n_heads, head_dim, cos.data(), sin.data());
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < half; ++i) {
      ASSERT_TRUE(same_bits(x[size_t(h * head_dim + i)], paired[size_t(h * head_dim + 2 * i)])) << h << "," << i;
      ASSERT_TRUE(same_bits(x[size_t(h * head_dim + i + half)], paired[size_t(h * head_dim + 2 * i + 1)]))
          << h << "," << i;
    }
}

TEST(KernelsScalar, Axpy) {
  const int64_t n = 1001;
  const std::vector<float> x = random_row(n, 16);
  std::vector<float> y = random_row(n, 17);
  const std::vector<float> y0 = y;
  const float a = -0.7f;
  K().axpy(y.data(), a, x.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(same_bits(y[i], std::fma(a, x[i], y0[i]))) << i;
    // One rounding of the exact a * x + y: within half an ulp of the result.
    const long double exact = (long double)a * x[i] + y0[i];
    int exponent;
    std::frexp(y[i], &exponent);
    ASSERT_LE(std::fabs((long double)y[i] - exact), std::ldexp(1.0L, exponent - 25) * 1.000001L)
        << i;
  }
}

// ---- backend selection ----------------------------------------------------------------------

TEST(KernelsSelection, DefaultsToTheFastestAvailable) {
  const char* env = std::getenv("R1PI_BACKEND");
  if (env && *env) GTEST_SKIP() << "R1PI_BACKEND=" << env;
  EXPECT_EQ(&kernels(), available_backends().front());
  EXPECT_EQ(available_backends().back(), &kernels_scalar());
}

// Each runs in a fresh process (the choice is made once per process).
void exit_with_selection(const char* backend) {
  setenv("R1PI_BACKEND", backend, 1);
  try {
    std::fprintf(stderr, "selected %s\n", kernels().name);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::exit(3);
  }
  std::exit(0);
}

TEST(KernelsSelectionDeathTest, EnvironmentChoosesOrRefuses) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_selection("scalar"), testing::ExitedWithCode(0), "selected scalar");
  EXPECT_EXIT(exit_with_selection("bogus"), testing::ExitedWithCode(3),
              "R1PI_BACKEND=bogus: unknown backend");
  // The x86 backends: each taken where this build and CPU have it, refused with a clear error
  // elsewhere.
  struct X86 {
    const char* name;
    const Kernels* kernels;
    const char* lacks;  // the error's reason where the CPU or compiler lacks it
  };
  for (const X86& b : {X86{"avx2", kernels_avx2(), "this CPU lacks AVX2"},
                       X86{"avx2-vnni", kernels_avx2_vnni(), "this CPU or compiler lacks AVX-VNNI"},
                       X86{"avx512-vnni", kernels_avx512_vnni(), "this CPU or compiler lacks AVX-512"}}) {
    if (b.kernels) {
      EXPECT_EXIT(exit_with_selection(b.name), testing::ExitedWithCode(0),
                  std::string("selected ") + b.name);
    } else {
      EXPECT_EXIT(exit_with_selection(b.name), testing::ExitedWithCode(3),
                  std::string("R1PI_BACKEND=") + b.name + ": (" + b.lacks + "|backend not available)");
    }
  }
}

}  // namespace
}  // namespace r1pi
