// The NEON backends against the scalar reference, byte for byte: every Kernels entry on random
// and extreme inputs (every fp16 scale, int8 -128, ties, NaN and infinities, all tail lengths),
// the matrix products for every batch size and row range against vec_dot, and the vector exp
// over a sweep of all floats. Runs where this build has a NEON backend (aarch64, natively on a
// Pi or under qemu); elsewhere every test is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "neon/expf_r1pi.h"
#include "ggml/fp16.h"
#include "neon/kernels.h"
#include "neon/kernels_neon.h"
#include "ggml/quantize.h"

namespace r1pi {
namespace {

const Kernels& S() { return kernels_scalar(); }

// The ARM backends of this build.
std::vector<const Kernels*> neon_backends() {
  std::vector<const Kernels*> v;
  if (const Kernels* k = kernels_neon_dotprod()) v.push_back(k);
  if (const Kernels* k = kernels_neon()) v.push_back(k);
  return v;
}

#define FOR_EACH_NEON(k)                                                        \
  if (neon_backends().empty()) GTEST_SKIP() << "no NEON backend in this build"; \
  for (const Kernels* k : neon_backends())

uint32_t raw_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// A float's bits, every NaN as one: NaN payloads are not part of the recipe. Which operand's NaN
// an operation passes on depends on the operand order the compiler picks for commutative
// operations (the scalar reference's own payloads differ between compilers), so the backends are
// required to give NaN where the reference does, and the same bits everywhere else.
uint32_t bits(float f) { return std::isnan(f) ? 0x7fc00000u : raw_bits(f); }

bool same_bytes(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i])) return false;
  return true;
}

std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  return x;
}

// Random bytes: weight blocks with arbitrary quants (int8 -128 included) and arbitrary fp16 scales
// (subnormal, huge, inf and NaN as well).
template <class Block>
std::vector<Block> random_blocks(size_t count, uint32_t seed, bool finite_scales = true) {
  std::vector<Block> v(count);
  std::mt19937 rng(seed);
  auto* p = reinterpret_cast<uint8_t*>(v.data());
  for (size_t i = 0; i < count * sizeof(Block); ++i) p[i] = uint8_t(rng());
  if (finite_scales) {
    // Scales that keep sums finite (so that a mismatch cannot hide behind inf or NaN).
    std::uniform_real_distribution<float> u(-0.05f, 0.05f);
    for (Block& b : v) b.d = fp32_to_fp16(u(rng));
  }
  return v;
}

std::vector<block_q8_0> quantize_q8_0(const std::vector<float>& x) {
  std::vector<block_q8_0> q(x.size() / 32);
  quantize_row_q8_0_ref(x.data(), q.data(), int64_t(x.size()));
  return q;
}

TEST(KernelsNeon, SelectionAndTables) {
  if (neon_backends().empty()) GTEST_SKIP() << "no NEON backend in this build";
  std::string names;
  for (const Kernels* k : neon_backends()) {
    names += std::string(names.empty() ? "" : ", ") + k->name;
    const void* const* entries = reinterpret_cast<const void* const*>(k);
    for (size_t i = 1; i < sizeof(Kernels) / sizeof(void*); ++i) EXPECT_NE(entries[i], nullptr) << i;
  }
  std::printf("NEON backends in this build: %s; kernels() uses %s\n", names.c_str(),
              kernels().name);
  EXPECT_STREQ(kernels_neon()->name, "neon");
  if (kernels_neon_dotprod()) {
    EXPECT_STREQ(kernels_neon_dotprod()->name, "neon-dotprod");
  }
  const char* env = std::getenv("R1PI_BACKEND");
  if (env == nullptr || *env == '\0') {
    EXPECT_EQ(&kernels(), kernels_neon_dotprod() ? kernels_neon_dotprod() : kernels_neon());
  } else {
    EXPECT_STREQ(kernels().name, env);
  }
}

// ---- Q8_0 activations ------------------------------------------------------------------------

TEST(KernelsNeon, QuantizeQ8_0) {
  FOR_EACH_NEON(k) {
    std::vector<std::vector<float>> rows;
    for (float scale : {1e-30f, 1e-6f, 1.0f, 3.0f, 1e4f, 1e30f}) {
      rows.push_back(random_row(32 * 37, uint32_t(scale * 7 + 1), scale));
    }
    // Ties: amax 127 gives id = 1, so k + 0.5 lands exactly halfway.
    std::vector<float> ties(64);
    for (int i = 0; i < 64; ++i) ties[i] = float(i % 32 == 0 ? 127 : (i - 40)) + (i % 32 == 0 ? 0 : 0.5f);
    rows.push_back(ties);
    // Zero, signed zeros, subnormal blocks, d near FLT_MIN, infinities and NaNs.
    std::vector<float> odd(32 * 8, 0.0f);
    for (int i = 0; i < 32; ++i) odd[i] = (i % 2) ? -0.0f : 0.0f;
    for (int i = 32; i < 64; ++i) odd[i] = std::ldexp(float(i), -140);
    for (int i = 64; i < 96; ++i) odd[i] = float(i - 80) * FLT_MIN * 2.0f;
    for (int i = 96; i < 128; ++i) odd[i] = float(i - 110);
    odd[100] = INFINITY;
    for (int i = 128; i < 160; ++i) odd[i] = float(i - 140);
    odd[130] = NAN;
    odd[131] = -INFINITY;
    for (int i = 160; i < 192; ++i) odd[i] = NAN;
    for (int i = 192; i < 224; ++i) odd[i] = float(i - 200);
    odd[195] = NAN;
    for (int i = 224; i < 256; ++i) odd[i] = 65519.0f * 127.0f * (i % 2 ? 1 : -1);  // d at fp16's edge
    rows.push_back(odd);
    for (const std::vector<float>& x : rows) {
      const int64_t n = int64_t(x.size());
      std::vector<block_q8_0> want(size_t(n / 32)), got(size_t(n / 32));
      S().quantize_row_q8_0(x.data(), want.data(), n);
      k->quantize_row_q8_0(x.data(), got.data(), n);
      for (size_t b = 0; b < want.size(); ++b)
        ASSERT_TRUE(same_bytes(&want[b], &got[b], sizeof(block_q8_0))) << k->name << " block " << b;
    }
  }
}

// ---- quantised dot products ------------------------------------------------------------------

TEST(KernelsNeon, DotQ8_0) {
  FOR_EACH_NEON(k) {
    for (int64_t nb : {1, 2, 3, 8, 9, 33, 128}) {
      for (uint32_t seed = 0; seed < 3; ++seed) {
        // Random bytes (int8 -128 on both sides) and real activations.
        const auto w = random_blocks<block_q8_0>(size_t(nb), seed * 100 + uint32_t(nb));
        const auto x = random_blocks<block_q8_0>(size_t(nb), seed * 100 + uint32_t(nb) + 1);
        const float want = S().q8_0.vec_dot(nb * 32, w.data(), x.data());
        const float got = k->q8_0.vec_dot(nb * 32, w.data(), x.data());
        ASSERT_EQ(bits(got), bits(want)) << k->name << " nb=" << nb << " " << got << " vs " << want;
        const auto xq = quantize_q8_0(random_row(nb * 32, seed + 5, 2.0f));
        ASSERT_EQ(bits(k->q8_0.vec_dot(nb * 32, w.data(), xq.data())),
                  bits(S().q8_0.vec_dot(nb * 32, w.data(), xq.data())));
      }
    }
    // All -128: the largest products (16384), every lane sum 65536.
    std::vector<block_q8_0> m(4);
    for (auto& b : m) {
      b.d = fp32_to_fp16(1.0f);
      std::memset(b.qs, 0x80, sizeof b.qs);
    }
    EXPECT_EQ(k->q8_0.vec_dot(128, m.data(), m.data()), 4.0f * 32 * 16384);
  }
}

TEST(KernelsNeon, DotQ4_0) {
  FOR_EACH_NEON(k) {
    for (int64_t nb : {1, 2, 3, 8, 9, 33, 128}) {
      for (uint32_t seed = 0; seed < 3; ++seed) {
        const auto w = random_blocks<block_q4_0>(size_t(nb), seed * 100 + uint32_t(nb) + 2);
        const auto x = random_blocks<block_q8_0>(size_t(nb), seed * 100 + uint32_t(nb) + 3);
        const float want = S().q4_0.vec_dot(nb * 32, w.data(), x.data());
        const float got = k->q4_0.vec_dot(nb * 32, w.data(), x.data());
        ASSERT_EQ(bits(got), bits(want)) << k->name << " nb=" << nb << " " << got << " vs " << want;
      }
    }
    // Weights from the real quantiser.
    const int64_t n = 4096;
    const std::vector<float> wf = random_row(n, 11, 0.5f);
    std::vector<block_q4_0> w(n / 32);
    quantize_row_q4_0_ref(wf.data(), w.data(), n);
    const auto x = quantize_q8_0(random_row(n, 12, 3.0f));
    EXPECT_EQ(bits(k->q4_0.vec_dot(n, w.data(), x.data())),
              bits(S().q4_0.vec_dot(n, w.data(), x.data())));
  }
}

TEST(KernelsNeon, DotQ6_K) {
  FOR_EACH_NEON(k) {
    for (int64_t nsb : {1, 2, 3, 9, 16}) {
      for (uint32_t seed = 0; seed < 3; ++seed) {
        // Random ql, qh and scales (-128 included); finite d.
        const auto w = random_blocks<block_q6_K>(size_t(nsb), seed * 100 + uint32_t(nsb) + 4);
        const auto x = random_blocks<block_q8_0>(size_t(nsb * 8), seed * 100 + uint32_t(nsb) + 5);
        const float want = S().q6_K.vec_dot(nsb * 256, w.data(), x.data());
        const float got = k->q6_K.vec_dot(nsb * 256, w.data(), x.data());
        ASSERT_EQ(bits(got), bits(want)) << k->name << " nsb=" << nsb << " " << got << " vs " << want;
      }
    }
    const int64_t n = 4096;
    const std::vector<float> wf = random_row(n, 13, 0.2f);
    std::vector<block_q6_K> w(n / 256);
    quantize_row_q6_K_ref(wf.data(), w.data(), n);
    const auto x = quantize_q8_0(random_row(n, 14, 3.0f));
    EXPECT_EQ(bits(k->q6_K.vec_dot(n, w.data(), x.data())),
              bits(S().q6_K.vec_dot(n, w.data(), x.data())));
  }
}

TEST(KernelsNeon, QuantDotsWithEveryFp16Scale) {
  // Every fp16 bit pattern as the weight scale (subnormals, inf, NaN): one block each.
  FOR_EACH_NEON(k) {
    auto x = random_blocks<block_q8_0>(1, 21);
    auto w8 = random_blocks<block_q8_0>(1, 22);
    auto w4 = random_blocks<block_q4_0>(1, 23);
    auto w6 = random_blocks<block_q6_K>(1, 24);
    auto x6 = random_blocks<block_q8_0>(8, 25);
    for (uint32_t h = 0; h < 65536; ++h) {
      w8[0].d = w4[0].d = w6[0].d = uint16_t(h);
      x[0].d = uint16_t(h * 7919u);
      ASSERT_EQ(bits(k->q8_0.vec_dot(32, w8.data(), x.data())),
                bits(S().q8_0.vec_dot(32, w8.data(), x.data())))
          << k->name << " h=" << h;
      ASSERT_EQ(bits(k->q4_0.vec_dot(32, w4.data(), x.data())),
                bits(S().q4_0.vec_dot(32, w4.data(), x.data())))
          << k->name << " h=" << h;
      if (h % 16 == 0) {
        ASSERT_EQ(bits(k->q6_K.vec_dot(256, w6.data(), x6.data())),
                  bits(S().q6_K.vec_dot(256, w6.data(), x6.data())))
            << k->name << " h=" << h;
      }
    }
  }
}

// ---- float dot products ----------------------------------------------------------------------

TEST(KernelsNeon, DotF32AndF16EveryLength) {
  FOR_EACH_NEON(k) {
    std::vector<int64_t> lengths;
    for (int64_t n = 0; n <= 70; ++n) lengths.push_back(n);
    for (int64_t n : {1001, 4096, 4099}) lengths.push_back(n);
    for (int64_t n : lengths) {
      const std::vector<float> a = random_row(n, uint32_t(n) + 30);
      const std::vector<float> b = random_row(n, uint32_t(n) + 31, 3.0f);
      ASSERT_EQ(bits(k->vec_dot_f32(n, a.data(), b.data())), bits(S().vec_dot_f32(n, a.data(), b.data())))
          << k->name << " n=" << n;
      std::vector<uint16_t> h(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(a[i] * 0.1f);
      ASSERT_EQ(bits(k->f16.vec_dot(n, h.data(), b.data())),
                bits(S().f16.vec_dot(n, h.data(), b.data())))
          << k->name << " n=" << n;
    }
  }
}

TEST(KernelsNeon, DotF16EveryHalf) {
  // Every fp16 value (NaN payloads included) through the vector and the tail conversions.
  FOR_EACH_NEON(k) {
    std::vector<uint16_t> h(65536);
    for (uint32_t i = 0; i < 65536; ++i) h[i] = uint16_t(i);
    const std::vector<float> one(65536, 1.0f);
    for (uint32_t i = 0; i < 65536; i += 8) {
      for (int64_t len : {1, 8, 11}) {
        const int64_t n = std::min<int64_t>(len, 65536 - i);
        ASSERT_EQ(bits(k->f16.vec_dot(n, h.data() + i, one.data())),
                  bits(S().f16.vec_dot(n, h.data() + i, one.data())))
            << k->name << " from " << i << " len " << n;
      }
    }
  }
}

// ---- matrix products ---------------------------------------------------------------------------

// Every element of a matmul equals its own vec_dot (scalar backend), for every B and row range.
template <class VecDot, class Mm>
void check_matmul(const Kernels& k, const char* what, int64_t n, int64_t rows, const uint8_t* w,
                  size_t w_row_bytes, const uint8_t* x, size_t x_row_bytes, VecDot scalar_dot, Mm mm) {
  for (int B : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13}) {
    for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, rows}, {1, rows}, {3, rows - 2}, {5, 6}}) {
      const int64_t stride = rows + 3;
      std::vector<float> out(size_t(B) * size_t(stride), -7.0f);
      MatmulArgs a{n, w, w_row_bytes, r0, r1, x, x_row_bytes, B, out.data(), stride};
      mm(a);
      for (int b = 0; b < B; ++b) {
        for (int64_t r = 0; r < stride; ++r) {
          const float got = out[size_t(b) * size_t(stride) + size_t(r)];
          if (r < r0 || r >= r1) {
            ASSERT_EQ(got, -7.0f) << k.name << " " << what << " wrote outside its rows";
            continue;
          }
          const float want = scalar_dot(w + r * w_row_bytes, x + b * x_row_bytes);
          ASSERT_EQ(bits(got), bits(want))
              << k.name << " " << what << " B=" << B << " rows " << r0 << ".." << r1 << " r=" << r
              << " b=" << b;
        }
      }
    }
  }
}

TEST(KernelsNeon, MatmulsEqualVecDots) {
  FOR_EACH_NEON(k) {
    const int64_t rows = 11, tokens = 13;
    {  // Q8_0 and Q4_0 weights, n = 96 (3 blocks); Q8_0 activations.
      const int64_t n = 96;
      const auto w8 = random_blocks<block_q8_0>(size_t(rows * n / 32), 40);
      const auto w4 = random_blocks<block_q4_0>(size_t(rows * n / 32), 41);
      const auto x = quantize_q8_0(random_row(tokens * n, 42, 2.0f));
      const auto* xb = reinterpret_cast<const uint8_t*>(x.data());
      const size_t xr = sizeof(block_q8_0) * n / 32;
      check_matmul(*k, "q8_0", n, rows, reinterpret_cast<const uint8_t*>(w8.data()),
                   sizeof(block_q8_0) * n / 32, xb, xr,
                   [&](const uint8_t* w, const uint8_t* xx) {
                     return S().q8_0.vec_dot(n, reinterpret_cast<const block_q8_0*>(w),
                                                  reinterpret_cast<const block_q8_0*>(xx));
                   },
                   k->q8_0.matmul);
      check_matmul(*k, "q4_0", n, rows, reinterpret_cast<const uint8_t*>(w4.data()),
                   sizeof(block_q4_0) * n / 32, xb, xr,
                   [&](const uint8_t* w, const uint8_t* xx) {
                     return S().q4_0.vec_dot(n, reinterpret_cast<const block_q4_0*>(w),
                                                  reinterpret_cast<const block_q8_0*>(xx));
                   },
                   k->q4_0.matmul);
    }
    {  // Q6_K, n = 512 (2 super-blocks).
      const int64_t n = 512;
      const auto w6 = random_blocks<block_q6_K>(size_t(rows * n / 256), 43);
      const auto x = quantize_q8_0(random_row(tokens * n, 44, 2.0f));
      check_matmul(*k, "q6_K", n, rows, reinterpret_cast<const uint8_t*>(w6.data()),
                   sizeof(block_q6_K) * n / 256, reinterpret_cast<const uint8_t*>(x.data()),
                   sizeof(block_q8_0) * n / 32,
                   [&](const uint8_t* w, const uint8_t* xx) {
                     return S().q6_K.vec_dot(n, reinterpret_cast<const block_q6_K*>(w),
                                                  reinterpret_cast<const block_q8_0*>(xx));
                   },
                   k->q6_K.matmul);
    }
    for (int64_t n : {37, 64}) {  // F16 and F32 with and without a tail.
      const std::vector<float> wf = random_row(rows * n, 45);
      std::vector<uint16_t> wh(wf.size());
      for (size_t i = 0; i < wf.size(); ++i) wh[i] = fp32_to_fp16(wf[i]);
      const std::vector<float> x = random_row(tokens * n, 46);
      const auto* xb = reinterpret_cast<const uint8_t*>(x.data());
      check_matmul(*k, "f32", n, rows, reinterpret_cast<const uint8_t*>(wf.data()), sizeof(float) * n,
                   xb, sizeof(float) * n,
                   [&](const uint8_t* w, const uint8_t* xx) {
                     return S().vec_dot_f32(n, reinterpret_cast<const float*>(w),
                                            reinterpret_cast<const float*>(xx));
                   },
                   k->f32.matmul);
      check_matmul(*k, "f16", n, rows, reinterpret_cast<const uint8_t*>(wh.data()),
                   sizeof(uint16_t) * n, xb, sizeof(float) * n,
                   [&](const uint8_t* w, const uint8_t* xx) {
                     return S().f16.vec_dot(n, reinterpret_cast<const uint16_t*>(w),
                                                reinterpret_cast<const float*>(xx));
                   },
                   k->f16.matmul);
    }
  }
}

// ---- exp and the float kernels ---------------------------------------------------------------

TEST(KernelsNeon, ExpOverAllFloats) {
  // Every 997th bit pattern: both signs, the cut-offs, infinities and NaNs.
  std::vector<float> x;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 997) {
    float f;
    const uint32_t v = uint32_t(u);
    std::memcpy(&f, &v, 4);
    x.push_back(f);
  }
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, kExpMin, kExpMax}) x.push_back(f);
  std::vector<float> y(x.size());
  if (!expf_r1pi_neon(x.data(), y.data(), int64_t(x.size()))) GTEST_SKIP() << "no NEON in this build";
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(bits(y[i]), bits(expf_r1pi(x[i]))) << "x = " << x[i] << " (0x" << std::hex << raw_bits(x[i]) << ")";
}

TEST(KernelsNeon, RmsNorm) {
  FOR_EACH_NEON(k) {
    for (int64_t n : {1, 3, 4, 7, 8, 13, 100, 4096, 4099}) {
      const std::vector<float> x = random_row(n, uint32_t(n) + 50, 3.0f);
      const std::vector<float> w = random_row(n, uint32_t(n) + 51);
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      S().rmsnorm(want.data(), x.data(), w.data(), n, 1e-5f);
      k->rmsnorm(got.data(), x.data(), w.data(), n, 1e-5f);
      ASSERT_TRUE(same_floats(want, got)) << k->name << " n=" << n;
    }
  }
}

TEST(KernelsNeon, Softmax) {
  FOR_EACH_NEON(k) {
    std::vector<std::vector<float>> inputs;
    for (int64_t n = 1; n <= 40; ++n) inputs.push_back(random_row(n, uint32_t(n) + 60, 4.0f));
    for (int64_t n : {1000, 1003}) inputs.push_back(random_row(n, uint32_t(n) + 61, 30.0f));
    std::vector<float> masked = random_row(37, 62, 2.0f);
    for (size_t i = 0; i < masked.size(); i += 3) masked[i] = -INFINITY;  // causal masks
    inputs.push_back(masked);
    std::vector<float> zeros = {-0.0f, 0.0f, -1.0f, 0.0f, -0.0f, -2.0f, -0.0f, 0.0f, -3.0f};
    inputs.push_back(zeros);
    std::vector<float> wide(50);
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = -200.0f + 9.0f * float(i);  // exp cut-offs
    inputs.push_back(wide);
    std::vector<float> with_nan = random_row(21, 63);
    with_nan[9] = NAN;
    inputs.push_back(with_nan);
    std::vector<float> nan_first = random_row(21, 64);
    nan_first[0] = NAN;
    inputs.push_back(nan_first);
    std::vector<float> with_inf = random_row(12, 65);
    with_inf[5] = INFINITY;
    inputs.push_back(with_inf);
    for (const std::vector<float>& in : inputs) {
      std::vector<float> want = in, got = in;
      S().softmax(want.data(), int64_t(in.size()));
      k->softmax(got.data(), int64_t(in.size()));
      ASSERT_TRUE(same_floats(want, got)) << k->name << " n=" << in.size();
    }
  }
}

TEST(KernelsNeon, SiluMul) {
  FOR_EACH_NEON(k) {
    std::vector<float> g;
    for (int i = 0; i < 20001; ++i) g.push_back(-100.0f + 200.0f * float(i) / 20000.0f);
    for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 87.3f, -87.3f, 88.7f, -88.7f, 1e-40f, FLT_MAX, -FLT_MAX})
      g.push_back(v);
    const std::vector<float> extra = random_row(203, 70, 5.0f);
    g.insert(g.end(), extra.begin(), extra.end());
    const std::vector<float> u = random_row(int64_t(g.size()), 71);
    for (int64_t n : {int64_t(g.size()), int64_t(1), int64_t(3), int64_t(6)}) {
      std::vector<float> want(g.begin(), g.begin() + n), got = want;
      S().silu_mul(want.data(), u.data(), n);
      k->silu_mul(got.data(), u.data(), n);
      ASSERT_TRUE(same_floats(want, got)) << k->name << " n=" << n;
    }
  }
}

TEST(KernelsNeon, Rope) {
  FOR_EACH_NEON(k) {
    for (int64_t head_dim : {2, 4, 6, 8, 10, 64, 70, 128}) {
      const int64_t n_heads = 3;
      std::vector<float> cos(size_t(head_dim / 2)), sin(size_t(head_dim / 2));
      for (int64_t i = 0; i < head_dim / 2; ++i) {
        const double theta = 23.0 * std::pow(10000.0, -2.0 * double(i) / double(head_dim));
        cos[i] = float(std::cos(theta));
        sin[i] = float(std::sin(theta));
      }
      const std::vector<float> x = random_row(n_heads * head_dim, uint32_t(head_dim) + 80);
      std::vector<float> want = x, got = x;
      S().rope(want.data(), n_heads, head_dim, cos.data(), sin.data());
      k->rope(got.data(), n_heads, head_dim, cos.data(), sin.data());
      ASSERT_TRUE(same_floats(want, got)) << k->name << " hd=" << head_dim;
    }
  }
}

TEST(KernelsNeon, Axpy) {
  FOR_EACH_NEON(k) {
    for (int64_t n : {0, 1, 3, 4, 5, 8, 17, 1001}) {
      const std::vector<float> x = random_row(n, uint32_t(n) + 90);
      const std::vector<float> y = random_row(n, uint32_t(n) + 91);
      std::vector<float> want = y, got = y;
      S().axpy(want.data(), -0.7f, x.data(), n);
      k->axpy(got.data(), -0.7f, x.data(), n);
      ASSERT_TRUE(same_floats(want, got)) << k->name << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace r1pi
