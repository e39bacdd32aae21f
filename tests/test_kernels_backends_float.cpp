// The float kernels of every backend this build runs on this CPU against the scalar reference,
// byte for byte (test_kernels_backends.cpp has the quantised ones and the engine): the float dot
// products at every tail length and every fp16 value, rmsnorm, softmax (masks, infinities, NaN),
// silu_mul and the vector exps over sweeps of all floats, rope, axpy and attention's weighted
// sums. Portable code only, so that the same file runs natively and under qemu; with no SIMD
// backend the comparisons are skipped. Where a NaN's payload follows the compiler's operand order, any NaN matches a NaN
// (bits_any_nan); everywhere else the bits must be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/fp16.h"
#include "neon/expf_r1pi.h"
#include "neon/kernels.h"
#include "neon/kernels_avx2.h"
#include "neon/kernels_neon.h"
#include "test_support.h"

namespace r1pi {
namespace {

const Kernels& S() { return kernels_scalar(); }

using namespace test;  // the kernel tests' helpers (test_support.h)

const int64_t kFloatLengths[] = {1, 2, 7, 8, 9, 13, 16, 100, 128, 4101};

std::vector<float> float_row(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::vector<float> x = normal_row(n, rng, scale);
  for (int64_t i = 3; i < n; i += 9) x[size_t(i)] = (i % 2) ? -0.0f : 0.0f;
  return x;
}

TEST(Backends, FloatDotsSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(21);
    for (int64_t n : kFloatLengths) {
      for (float scale : {1.0f, 1e-20f, 1e18f}) {
        const std::vector<float> a = float_row(n, rng, scale), b = float_row(n, rng);
        float got = k->vec_dot_f32(n, a.data(), b.data());
        float want = S().vec_dot_f32(n, a.data(), b.data());
        ASSERT_TRUE(same_floats(&got, &want, 1)) << k->name << " f32 n=" << n;
        std::vector<uint16_t> h(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) h[size_t(i)] = i % 4 ? fp32_to_fp16(a[size_t(i)]) : random_half(rng);
        got = for_type(*k, GgmlType::F16).vec_dot(n, h.data(), b.data());
        want = for_type(S(), GgmlType::F16).vec_dot(n, h.data(), b.data());
        ASSERT_TRUE(same_floats(&got, &want, 1)) << k->name << " f16 n=" << n;
      }
    }
    // Products that underflow to -0 in a lane: the untouched lanes of a tail must keep it.
    std::vector<float> a(13, -1e-30f), b(13, 1e-30f);
    const float got = k->vec_dot_f32(13, a.data(), b.data());
    const float want = S().vec_dot_f32(13, a.data(), b.data());
    EXPECT_TRUE(same_floats(&got, &want, 1)) << k->name;
  }
}

// Every length up to 70 (every tail of the vector loops), F32 and F16.
TEST(Backends, FloatDotsEveryLength) {
  FOR_EACH_BACKEND(k) {
    for (int64_t n = 0; n <= 70; ++n) {
      const std::vector<float> a = random_row(n, uint32_t(n) + 30);
      const std::vector<float> b = random_row(n, uint32_t(n) + 31, 3.0f);
      float got = k->vec_dot_f32(n, a.data(), b.data()), want = S().vec_dot_f32(n, a.data(), b.data());
      ASSERT_TRUE(same_floats(&got, &want, 1)) << k->name << " f32 n=" << n;
      std::vector<uint16_t> h(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) h[size_t(i)] = fp32_to_fp16(a[size_t(i)] * 0.1f);
      got = for_type(*k, GgmlType::F16).vec_dot(n, h.data(), b.data());
      want = for_type(S(), GgmlType::F16).vec_dot(n, h.data(), b.data());
      ASSERT_TRUE(same_floats(&got, &want, 1)) << k->name << " f16 n=" << n;
    }
  }
}

// Every fp16 and every bf16 value (NaN payloads included) through the vector and the tail
// conversions.
TEST(Backends, HalfDotsEveryValue) {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < 65536; ++i) h[i] = uint16_t(i);
  const std::vector<float> one(65536, 1.0f);
  FOR_EACH_BACKEND(k) {
    for (GgmlType t : {GgmlType::F16, GgmlType::BF16}) {
      for (uint32_t i = 0; i < 65536; i += 8) {
        for (int64_t len : {1, 8, 11}) {
          const int64_t n = std::min<int64_t>(len, 65536 - i);
          ASSERT_EQ(bits_any_nan(for_type(*k, t).vec_dot(n, h.data() + i, one.data())),
                    bits_any_nan(for_type(S(), t).vec_dot(n, h.data() + i, one.data())))
              << k->name << " " << ggml_type_name(t) << " from " << i << " len " << n;
        }
      }
    }
  }
}

TEST(Backends, RmsnormSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(23);
    for (int64_t n : kFloatLengths) {
      for (float scale : {1.0f, 1e-20f, 1e15f, 0.0f}) {
        const std::vector<float> x = float_row(n, rng, scale), w = float_row(n, rng);
        std::vector<float> got(size_t(n) + 1, 7.0f), want = got;
        k->rmsnorm(got.data(), x.data(), w.data(), n, 1e-5f);
        S().rmsnorm(want.data(), x.data(), w.data(), n, 1e-5f);
        ASSERT_TRUE(same_floats(got.data(), want.data(), got.size())) << k->name << " n=" << n;
      }
    }
  }
}

// Values around exp's edges: below -87.3 (0), above 88.7 (inf), and +-0.
std::vector<float> exp_edge_values() {
  return {-100.0f, -87.4f, -87.3f, -87.29f, -87.0f, -20.0f, -1.0f, -1e-8f, -0.0f, 0.0f, 1e-8f,
          0.5f,    1.0f,   20.0f,  88.0f,   88.69f, 88.7f, 88.71f, 88.8f, 100.0f, -3.4e38f, 3.4e38f};
}

TEST(Backends, SoftmaxSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(29);
    for (int64_t n : kFloatLengths) {
      for (float scale : {1.0f, 10.0f, 100.0f}) {
        std::vector<float> got = float_row(n, rng, scale), want = got;
        k->softmax(got.data(), n);
        S().softmax(want.data(), n);
        ASSERT_TRUE(same_floats(got.data(), want.data(), size_t(n))) << k->name << " n=" << n;
      }
      std::vector<float> equal(size_t(n), -3.25f), want = equal;
      k->softmax(equal.data(), n);
      S().softmax(want.data(), n);
      ASSERT_TRUE(same_floats(equal.data(), want.data(), size_t(n))) << k->name << " all equal";
    }
    // exp's edges: x - max spans the whole range.
    std::vector<float> e = exp_edge_values();
    for (float extra : {0.0f, 50.0f, -50.0f}) {
      std::vector<float> got = e, want = e;
      for (size_t i = 0; i < e.size(); i += 3) got[i] = want[i] = e[i] + extra;
      k->softmax(got.data(), int64_t(got.size()));
      S().softmax(want.data(), int64_t(want.size()));
      EXPECT_TRUE(same_floats(got.data(), want.data(), got.size())) << k->name << " edges";
    }
    // A NaN inside (passed over by the maximum, then it poisons the sum) and at the front.
    for (size_t where : {size_t(0), size_t(5), size_t(12)}) {
      std::vector<float> got = float_row(13, rng), want;
      got[where] = std::nanf("");
      want = got;
      k->softmax(got.data(), 13);
      S().softmax(want.data(), 13);
      EXPECT_TRUE(same_floats(got.data(), want.data(), 13)) << k->name << " NaN at " << where;
    }
  }
}

// Causal masks (-inf), signed zeros, the exp cut-offs, an infinity.
TEST(Backends, SoftmaxMasksAndInfinities) {
  std::vector<std::vector<float>> inputs;
  std::vector<float> masked = random_row(37, 62, 2.0f);
  for (size_t i = 0; i < masked.size(); i += 3) masked[i] = -INFINITY;
  inputs.push_back(masked);
  inputs.push_back({-0.0f, 0.0f, -1.0f, 0.0f, -0.0f, -2.0f, -0.0f, 0.0f, -3.0f});
  std::vector<float> wide(50);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = -200.0f + 9.0f * float(i);
  inputs.push_back(wide);
  std::vector<float> with_inf = random_row(12, 65);
  with_inf[5] = INFINITY;
  inputs.push_back(with_inf);
  FOR_EACH_BACKEND(k) {
    for (const std::vector<float>& in : inputs) {
      std::vector<float> want = in, got = in;
      S().softmax(want.data(), int64_t(in.size()));
      k->softmax(got.data(), int64_t(in.size()));
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(bits_any_nan(got[i]), bits_any_nan(want[i])) << k->name << " n=" << in.size() << " i=" << i;
    }
  }
}

TEST(Backends, SiluMulSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(31);
    for (int64_t n : kFloatLengths) {
      for (float scale : {1.0f, 30.0f, 1e-30f}) {
        std::vector<float> got = float_row(n, rng, scale), want = got;
        const std::vector<float> u = float_row(n, rng);
        k->silu_mul(got.data(), u.data(), n);
        S().silu_mul(want.data(), u.data(), n);
        ASSERT_TRUE(same_floats(got.data(), want.data(), size_t(n))) << k->name << " n=" << n;
      }
    }
    std::vector<float> g = exp_edge_values();
    g.push_back(std::nanf(""));
    for (float v : exp_edge_values()) g.push_back(-v);
    std::vector<float> want = g;
    const std::vector<float> u = float_row(int64_t(g.size()), rng);
    k->silu_mul(g.data(), u.data(), int64_t(g.size()));
    S().silu_mul(want.data(), u.data(), int64_t(want.size()));
    EXPECT_TRUE(same_floats(g.data(), want.data(), g.size())) << k->name << " edges";
  }
}

// The vector exp (inside silu_mul, u = 1) over a sweep of all float bit patterns (NaNs, infinities
// and subnormals included), every float near exp's cut-offs -87.3 and 88.7, and down to 0.
TEST(Backends, SiluMulSweepsFloats) {
  std::vector<float> g;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 997) g.push_back(from_bits(uint32_t(b)));
  for (float lo : {-87.4f, 88.6f}) {  // v: the argument of exp(-g)
    for (float v = lo; v <= lo + 0.2f; v = std::nextafter(v, 1e9f)) g.push_back(-v);
  }
  for (float v = 1e-3f; v > 1e-37f; v *= 0.999f) {
    g.push_back(v);
    g.push_back(-v);
  }
  for (float v : {1e-38f, 1e-40f, 1e-45f, 0.0f}) {
    g.push_back(v);
    g.push_back(-v);
  }
  const std::vector<float> u(g.size(), 1.0f);
  FOR_EACH_BACKEND(k) {
    std::vector<float> got = g, want = g;
    k->silu_mul(got.data(), u.data(), int64_t(got.size()));
    S().silu_mul(want.data(), u.data(), int64_t(want.size()));
    EXPECT_TRUE(same_floats(got.data(), want.data(), got.size())) << k->name;
  }
}

// The vector exps themselves (AVX2's, NEON's) against expf_r1pi: a sweep of all float bit
// patterns, every float within 0.1 of the cut-offs -87.3 and 88.7, and a fine geometric sweep
// towards 0 (silu_mul above hides exp results below 2^-24 in 1 + e).
TEST(Backends, VectorExpSweepsFloats) {
  std::vector<float> x;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 251) x.push_back(from_bits(uint32_t(b)));
  for (float c : {-87.3f, 88.7f})
    for (float v = c - 0.1f; v <= c + 0.1f; v = std::nextafter(v, 1e9f)) x.push_back(v);
  for (float v = 0.1f; v > 1e-37f; v *= 0.9999f) {
    x.push_back(v);
    x.push_back(-v);
  }
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, kExpMin, kExpMax}) x.push_back(f);
  std::vector<float> got(x.size());
  auto check = [&](const char* which) {
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = expf_r1pi(x[i]);
      if (bits_any_nan(got[i]) != bits_any_nan(want) && bad++ < 5)
        ADD_FAILURE() << which << " exp(" << x[i] << " = 0x" << std::hex << bits_of(x[i]) << "): 0x"
                      << bits_of(got[i]) << " vs 0x" << bits_of(want) << std::dec;
    }
    EXPECT_EQ(bad, 0u) << which << " of " << x.size();
  };
  bool any = false;
  if (kernels_avx2()) {
    expf_r1pi_avx2_unchecked(x.data(), got.data(), int64_t(x.size()));
    check("avx2");
    any = true;
  }
  if (expf_r1pi_neon(x.data(), got.data(), int64_t(x.size()))) {
    check("neon");
    any = true;
  }
  if (!any) GTEST_SKIP() << "no vector exp in this build and CPU";
}

TEST(Backends, RopeSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(37);
    for (int64_t head_dim : {2, 6, 8, 10, 32, 64, 128}) {
      for (int64_t heads : {1, 3, 8}) {
        const std::vector<float> angle = float_row(head_dim / 2, rng, 3.0f);
        std::vector<float> c(angle.size()), s(angle.size());
        for (size_t i = 0; i < angle.size(); ++i) {
          c[i] = std::cos(angle[i]);
          s[i] = std::sin(angle[i]);
        }
        std::vector<float> got = float_row(heads * head_dim, rng), want = got;
        std::vector<float> got_neox = got, want_neox = got;
        k->rope(got.data(), heads, head_dim, c.data(), s.data());
        S().rope(want.data(), heads, head_dim, c.data(), s.data());
        ASSERT_TRUE(same_floats(got.data(), want.data(), got.size()))
            << k->name << " head_dim " << head_dim << " heads " << heads;
        k->rope_neox(got_neox.data(), heads, head_dim, c.data(), s.data());
        S().rope_neox(want_neox.data(), heads, head_dim, c.data(), s.data());
        ASSERT_TRUE(same_floats(got_neox.data(), want_neox.data(), got.size()))
            << k->name << " rope_neox head_dim " << head_dim << " heads " << heads;
      }
    }
  }
}

TEST(Backends, AxpySameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(41);
    for (int64_t n : kFloatLengths) {
      for (float a : {0.0f, -0.0f, 0.37f, -1e-30f, 1e20f}) {
        const std::vector<float> x = float_row(n, rng);
        std::vector<float> got = float_row(n + 1, rng), want = got;
        k->axpy(got.data(), a, x.data(), n);
        S().axpy(want.data(), a, x.data(), n);
        ASSERT_TRUE(same_floats(got.data(), want.data(), got.size())) << k->name << " n=" << n;
      }
    }
  }
}

// Attention's weighted sums over F32 and F16 value rows: every row count of the tiles and their
// remainders, element counts with tails, position counts around the 32-position blocks, padded
// strides, and outputs that already hold a partial sum.
TEST(Backends, WeightedSumSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(43);
    for (bool f16 : {false, true})
      for (int64_t n : {1, 4, 7, 8, 9, 13, 16, 17, 24, 31, 64, 72, 100, 128, 200})
        for (int R : {1, 2, 3, 4, 5, 6, 9})
          for (int64_t T : {0, 1, 5, 31, 32, 33, 70}) {
            const size_t elem = f16 ? 2 : 4, v_row = size_t(n + 3) * elem;
            std::vector<uint8_t> v(size_t(T) * v_row);
            const std::vector<float> vf = float_row(T * (n + 3), rng);
            for (size_t i = 0; i < vf.size(); ++i) {
              if (f16) {
                const uint16_t h = fp32_to_fp16(vf[i]);
                std::memcpy(&v[2 * i], &h, 2);
              } else {
                std::memcpy(&v[4 * i], &vf[i], 4);
              }
            }
            const int64_t p_stride = T + 2, out_stride = n + 5;
            const std::vector<float> p = float_row(R * p_stride + 1, rng, 0.1f);
            std::vector<float> got = float_row(R * out_stride, rng), want = got;
            const WeightedSumArgs a{n, v.data(), v_row, T, p.data(), p_stride, R, got.data(), out_stride};
            WeightedSumArgs b = a;
            b.out = want.data();
            (f16 ? k->weighted_sum_f16 : k->weighted_sum_f32)(a);
            (f16 ? S().weighted_sum_f16 : S().weighted_sum_f32)(b);
            ASSERT_TRUE(same_floats(got.data(), want.data(), got.size()))
                << k->name << (f16 ? " f16" : " f32") << " n=" << n << " R=" << R << " T=" << T;
          }
  }
}

// The same over Q8_0 value rows (whole blocks; extreme quants and scales included).
TEST(Backends, WeightedSumQ8_0SameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(44);
    for (int64_t n : {32, 64, 96, 128})
      for (int R : {1, 2, 3, 4, 5, 9})
        for (int64_t T : {0, 1, 31, 32, 33, 70}) {
          const int64_t blocks = n / QK8_0 + 1;  // a padded row
          std::vector<block_q8_0> v(size_t(T * blocks));
          std::uniform_int_distribution<int> q(-128, 127);
          for (size_t i = 0; i < v.size(); ++i) {
            v[i].d = fp32_to_fp16(i % 7 == 0 ? 65504.0f : i % 5 == 0 ? 6e-8f : 0.01f * float(i % 13));
            for (int8_t& x : v[i].qs) x = int8_t(q(rng));
          }
          const int64_t p_stride = T + 1, out_stride = n + 3;
          const std::vector<float> p = float_row(R * p_stride + 1, rng, 0.1f);
          std::vector<float> got = float_row(R * out_stride, rng), want = got;
          const WeightedSumArgs a{n, reinterpret_cast<const uint8_t*>(v.data()),
                                  sizeof(block_q8_0) * size_t(blocks), T, p.data(), p_stride, R,
                                  got.data(), out_stride};
          WeightedSumArgs b = a;
          b.out = want.data();
          k->weighted_sum_q8_0(a);
          S().weighted_sum_q8_0(b);
          ASSERT_TRUE(same_floats(got.data(), want.data(), got.size()))
              << k->name << " n=" << n << " R=" << R << " T=" << T;
        }
  }
}

}  // namespace
}  // namespace r1pi
