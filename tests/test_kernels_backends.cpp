// Every backend this build runs on this CPU (available_backends(): avx512-vnni, avx2-vnni, avx2 on
// x86, neon / neon-dotprod on ARM) against the scalar reference, byte for byte (memcmp): each
// Kernels entry on random and extreme inputs, the matrix products for every batch size 1..17 (and
// large ones) over odd row ranges, and the whole engine's output on a generated model. Portable
// code only, so that the same file runs natively and under qemu; with no SIMD backend the
// comparisons are skipped.
//
// Inputs are finite (the engine never produces NaN or infinite activations), except where a test
// says otherwise: infinite fp16 weight scales, 1e30-scaled activations whose fp16 scale overflows,
// and a NaN through softmax and silu_mul. Any NaN these produce must match bit for bit too.
#include <gtest/gtest.h>

#include <cfloat>
#include <cstddef>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "ggml/fp16.h"
#include "neon/expf_r1pi.h"
#include "neon/kernels.h"
#include "neon/kernels_avx2.h"
#include "ggml/quantize.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const Kernels& S() { return kernels_scalar(); }

std::vector<const Kernels*> simd_backends() {
  std::vector<const Kernels*> v;
  for (const Kernels* k : available_backends())
    if (k != &kernels_scalar()) v.push_back(k);
  return v;
}

#define FOR_EACH_BACKEND(k)                                                              \
  if (simd_backends().empty()) GTEST_SKIP() << "no SIMD backend in this build and CPU"; \
  for (const Kernels* k : simd_backends())

using test::bits_of;
using test::from_bits;

// memcmp of two float arrays, reporting the first difference.
::testing::AssertionResult same_floats(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "element %zu of %zu: %.9g (0x%08x) vs scalar %.9g (0x%08x)", i,
                    n, double(a[i]), unsigned(bits_of(a[i])), double(b[i]), unsigned(bits_of(b[i])));
      return ::testing::AssertionFailure() << msg;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_bytes(const void* a, const void* b, size_t n) {
  const uint8_t* x = static_cast<const uint8_t*>(a);
  const uint8_t* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i])
      return ::testing::AssertionFailure() << "byte " << i << " of " << n << ": " << int(x[i])
                                           << " vs scalar " << int(y[i]);
  return ::testing::AssertionSuccess();
}

// ---- inputs ---------------------------------------------------------------------------------------

std::vector<float> normal_row(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  return x;
}

// Activation rows that exercise the Q8_0 quantiser: blocks of every kind in turn.
//   kind 0: normal values        1: all zeros (and -0)       2: all equal
//   3: ties (x * id = k + 0.5 exactly)    4: tiny (1e-30, subnormal d: all quants 0)
//   5: subnormal floats          6: huge (1e30: d overflows fp16 to inf)   7: mixed magnitudes
std::vector<float> activation_row(int64_t n, std::mt19937& rng, bool extreme) {
  std::vector<float> x = normal_row(n, rng);
  std::uniform_int_distribution<int> kind_of(0, 7), tie(-127, 126);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (int64_t b = 0; b < n / 32; ++b) {
    float* xb = x.data() + b * 32;
    int kind = kind_of(rng);
    if (!extreme && (kind == 4 || kind == 6)) kind = 0;
    switch (kind) {
      case 1:
        for (int i = 0; i < 32; ++i) xb[i] = (i % 3 == 0) ? -0.0f : 0.0f;
        break;
      case 2:
        for (int i = 0; i < 32; ++i) xb[i] = -1.75f;
        break;
      case 3:
        // amax = 15.875 = 127 / 8: d = 0.125 and id = 8 exactly, so (k + 0.5) / 8 is a tie.
        for (int i = 0; i < 32; ++i) xb[i] = (float(tie(rng)) + 0.5f) / 8.0f;
        xb[int(rng() % 32)] = (rng() & 1) ? 15.875f : -15.875f;
        break;
      case 4:
        for (int i = 0; i < 32; ++i) xb[i] *= 1e-30f;
        break;
      case 5:
        for (int i = 0; i < 32; ++i) xb[i] = uni(rng) * 1e-39f;
        break;
      case 6:
        for (int i = 0; i < 32; ++i) xb[i] *= 1e30f;
        break;
      case 7:
        for (int i = 0; i < 32; ++i) xb[i] *= std::ldexp(1.0f, int(rng() % 40) - 20);
        break;
      default:
        break;
    }
  }
  return x;
}

// A random finite fp16 (any sign, subnormals and zeros included); inf too when asked.
uint16_t random_half(std::mt19937& rng, bool allow_inf = false) {
  for (;;) {
    const uint16_t h = uint16_t(rng());
    const bool special = (h & 0x7c00) == 0x7c00;
    if (!special) return h;
    if (allow_inf && (h & 0x3ff) == 0) return h;
  }
}

// Realistic fp16 scale (what a quantiser writes).
uint16_t small_half(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(1e-4f, 0.05f);
  return fp32_to_fp16((rng() & 1) ? u(rng) : -u(rng));
}

size_t row_bytes(GgmlType t, int64_t n) { return ggml_row_bytes(t, uint64_t(n)); }

bool quantised(GgmlType t) { return activation_type(t) == GgmlType::Q8_0; }

// `rows` weight rows of n elements: quantised from normal values (odd rows) or random bytes with
// random scales (even rows; infinite scales when allow_inf).
std::vector<uint8_t> weight_rows(GgmlType t, int64_t n, int64_t rows, std::mt19937& rng,
                                 bool allow_inf = false) {
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> w(rb * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = w.data() + rb * size_t(r);
    const bool raw = r % 2 == 0;
    switch (t) {
      case GgmlType::Q4_0: {
        auto* blk = reinterpret_cast<block_q4_0*>(row);
        if (!raw) {
          const std::vector<float> v = normal_row(n, rng, 0.02f);
          quantize_row_q4_0_ref(v.data(), blk, n);
        } else {
          for (int64_t b = 0; b < n / 32; ++b) {
            blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
            for (uint8_t& q : blk[b].qs) q = uint8_t(rng());
          }
        }
        break;
      }
      case GgmlType::Q8_0: {
        auto* blk = reinterpret_cast<block_q8_0*>(row);
        for (int64_t b = 0; b < n / 32; ++b) {
          blk[b].d = (raw && rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
          for (int8_t& q : blk[b].qs) q = int8_t(rng());  // -128 included
          if (b % 5 == 0) blk[b].qs[rng() % 32] = -128;
        }
        break;
      }
      case GgmlType::Q6_K: {
        auto* blk = reinterpret_cast<block_q6_K*>(row);
        if (!raw) {
          const std::vector<float> v = normal_row(n, rng, 0.02f);
          quantize_row_q6_K_ref(v.data(), blk, n);
        } else {
          for (int64_t b = 0; b < n / 256; ++b) {
            for (uint8_t& q : blk[b].ql) q = uint8_t(rng());
            for (uint8_t& q : blk[b].qh) q = uint8_t(rng());
            for (int8_t& s : blk[b].scales) s = int8_t(rng());  // -128 .. 127
            blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
          }
        }
        break;
      }
      case GgmlType::F16: {
        auto* h = reinterpret_cast<uint16_t*>(row);
        for (int64_t i = 0; i < n; ++i) h[i] = (i % 3 == 0) ? random_half(rng) : small_half(rng);
        break;
      }
      case GgmlType::F32: {
        std::vector<float> v = normal_row(n, rng);
        for (int64_t i = 0; i < n; i += 7) v[size_t(i)] = (i % 2) ? -0.0f : 0.0f;
        if (raw)
          for (int64_t i = 1; i < n; i += 11) v[size_t(i)] *= 1e-38f;
        std::memcpy(row, v.data(), rb);
        break;
      }
    }
  }
  return w;
}

// The activations as the matrix product takes them: Q8_0 rows (quantised by the scalar reference)
// for quantised weights, floats otherwise.
struct Activations {
  std::vector<uint8_t> data;
  size_t row_bytes = 0;
};

Activations activations(GgmlType t, int64_t n, int B, std::mt19937& rng, bool extreme) {
  Activations a;
  a.row_bytes = quantised(t) ? size_t(n / 32) * sizeof(block_q8_0) : size_t(n) * sizeof(float);
  a.data.resize(a.row_bytes * size_t(B));
  for (int b = 0; b < B; ++b) {
    std::vector<float> x = activation_row(n, rng, extreme);
    if (!quantised(t)) {
      // Float activations: no block structure needed; keep the extremes finite.
      for (float& v : x)
        if (!std::isfinite(v * 1.0f)) v = 0.0f;
      std::memcpy(a.data.data() + a.row_bytes * size_t(b), x.data(), a.row_bytes);
    } else {
      S().quantize_row_q8_0(x.data(),
                            reinterpret_cast<block_q8_0*>(a.data.data() + a.row_bytes * size_t(b)), n);
    }
  }
  return a;
}

// Rows [r0, r1) x B tokens into an output with a wider stride; every element (the ones outside
// [r0, r1) keep their sentinel) must equal the scalar product's bytes.
::testing::AssertionResult check_matmul(const Kernels& k, GgmlType t, int64_t n, int64_t rows,
                                        const std::vector<uint8_t>& w, const Activations& x, int B,
                                        int64_t r0, int64_t r1) {
  const int64_t stride = rows + 3;
  const float sentinel = from_bits(0x7fc0beefu);
  std::vector<float> got(size_t(stride) * size_t(B), sentinel), want = got;
  MatmulArgs a{n, w.data(), row_bytes(t, n), r0, r1, x.data.data(), x.row_bytes, B, got.data(), stride};
  for_type(k, t).matmul(a);
  a.out = want.data();
  for_type(S(), t).matmul(a);
  return same_floats(got.data(), want.data(), got.size())
         << " (" << k.name << " " << ggml_type_name(t) << " n=" << n << " B=" << B << " rows " << r0 << ".."
         << r1 << ")";
}

// ---- the backend list ------------------------------------------------------------------------------

TEST(Backends, ListEndsWithScalarAndNamesAreUnique) {
  const std::vector<const Kernels*> all = available_backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), &kernels_scalar());
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) EXPECT_STRNE(all[i]->name, all[j]->name);
  for (const Kernels* k : all) {
    // Every entry filled in.
    const void* const* p = reinterpret_cast<const void* const*>(&k->quantize_row_q8_0);
    const size_t n = (sizeof(Kernels) - offsetof(Kernels, quantize_row_q8_0)) / sizeof(void*);
    for (size_t i = 0; i < n; ++i) EXPECT_NE(p[i], nullptr) << k->name << " entry " << i;
  }
}

TEST(Backends, DefaultIsTheFastest) {
  const char* env = std::getenv("R1PI_BACKEND");
  if (env && *env) GTEST_SKIP() << "R1PI_BACKEND is set";
  EXPECT_EQ(&kernels(), available_backends().front());
#if defined(__x86_64__)
  // Every x86-64 CPU of the last decade has AVX2; say so when a build machine does not.
  if (!kernels_avx2()) std::printf("note: this CPU has no AVX2+FMA+F16C: only scalar tested\n");
#endif
}

// ---- Q8_0 activations -------------------------------------------------------------------------------

TEST(Backends, QuantizeQ8_0SameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(11);
    for (int64_t n : {32, 96, 288, 4096 + 32}) {
      for (int rep = 0; rep < 20; ++rep) {
        const std::vector<float> x = activation_row(n, rng, true);
        std::vector<block_q8_0> got(size_t(n / 32)), want(size_t(n / 32));
        k->quantize_row_q8_0(x.data(), got.data(), n);
        S().quantize_row_q8_0(x.data(), want.data(), n);
        ASSERT_TRUE(same_bytes(got.data(), want.data(), got.size() * sizeof(block_q8_0)))
            << k->name << " n=" << n << " rep " << rep;
      }
    }
  }
}

TEST(Backends, QuantizeQ8_0TiesGoToEven) {
  // One block: amax 15.875 gives id = 8, so x = (k + 0.5) / 8 lands exactly on k + 0.5.
  std::vector<float> x(32);
  for (int i = 0; i < 31; ++i) x[size_t(i)] = (float(i * 8 - 124) + 0.5f) / 8.0f;
  x[31] = 15.875f;
  block_q8_0 want;
  S().quantize_row_q8_0(x.data(), &want, 32);
  for (int i = 0; i < 31; ++i) {
    const int k = i * 8 - 124;
    const int even = (k % 2 == 0) ? k : k + 1;  // k + 0.5 rounds to the even neighbour
    ASSERT_EQ(want.qs[i], even) << i;
  }
  FOR_EACH_BACKEND(k) {
    block_q8_0 got;
    k->quantize_row_q8_0(x.data(), &got, 32);
    EXPECT_TRUE(same_bytes(&got, &want, sizeof got)) << k->name;
  }
}

TEST(Backends, QuantizeQ8_0ExtremeScales) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(5);
    for (float scale : {0.0f, 1e-45f, 1e-40f, 1e-38f, 1.2e-38f * 127.0f, 1e-30f, 1e-8f, 1.0f, 6.5e4f,
                        6.6e4f * 127.0f, 1e30f, 3e38f}) {
      std::vector<float> x = normal_row(64, rng);
      for (float& v : x) v = std::fmax(-3.4e38f, std::fmin(3.4e38f, v * scale));
      x[7] = -x[7];
      x[9] = -0.0f;
      std::vector<block_q8_0> got(2), want(2);
      k->quantize_row_q8_0(x.data(), got.data(), 64);
      S().quantize_row_q8_0(x.data(), want.data(), 64);
      EXPECT_TRUE(same_bytes(got.data(), want.data(), 2 * sizeof(block_q8_0)))
          << k->name << " scale " << scale;
    }
  }
}

// ---- quantised dot products and matrix products -------------------------------------------------

TEST(Backends, QuantDotsSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(3);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q6_K}) {
      const std::vector<int64_t> lengths = t == GgmlType::Q6_K ? std::vector<int64_t>{256, 768, 4096 + 256}
                                                            : std::vector<int64_t>{32, 96, 288, 4096 + 32};
      for (int64_t n : lengths) {
        for (int rep = 0; rep < 6; ++rep) {
          const std::vector<uint8_t> w = weight_rows(t, n, 2, rng);
          const Activations x = activations(t, n, 1, rng, rep % 2 == 1);
          for (int r = 0; r < 2; ++r) {
            const uint8_t* wr = w.data() + row_bytes(t, n) * size_t(r);
            const float got = for_type(*k, t).vec_dot(n, wr, x.data.data());
            const float want = for_type(S(), t).vec_dot(n, wr, x.data.data());
            ASSERT_TRUE(same_floats(&got, &want, 1)) << k->name << " " << ggml_type_name(t) << " n=" << n;
          }
        }
      }
    }
  }
}

TEST(Backends, InfiniteWeightScales) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(19);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q6_K}) {
      const int64_t n = t == GgmlType::Q6_K ? 512 : 128;
      const std::vector<uint8_t> w = weight_rows(t, n, 8, rng, true);
      const Activations x = activations(t, n, 3, rng, true);
      EXPECT_TRUE(check_matmul(*k, t, n, 8, w, x, 3, 0, 8));
    }
  }
}

// Every batch size 1..17 and row ranges that start and end off any tile boundary.
TEST(Backends, MatmulEveryBatchAndRowRange) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(7);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::F16, GgmlType::F32}) {
      const int64_t n = t == GgmlType::Q6_K ? 512 : (quantised(t) ? 96 : 13);
      const int64_t rows = 23;
      const std::vector<uint8_t> w = weight_rows(t, n, rows, rng);
      for (int B = 1; B <= 17; ++B) {
        const Activations x = activations(t, n, B, rng, B % 3 == 0);
        const int64_t ranges[][2] = {{0, rows}, {1, 2}, {3, 10}, {5, 22}, {7, 8 + B % 5}, {16, 23}};
        for (const auto& rr : ranges) ASSERT_TRUE(check_matmul(*k, t, n, rows, w, x, B, rr[0], rr[1]));
      }
    }
  }
}

// Longer rows (several chunks of blocks) and large batches (several token tiles).
TEST(Backends, MatmulLongRowsLargeBatches) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(9);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::F16, GgmlType::F32}) {
      const std::vector<int64_t> lengths =
          t == GgmlType::Q6_K ? std::vector<int64_t>{256, 4096 + 256}
                           : (quantised(t) ? std::vector<int64_t>{32, 288, 4096 + 32}
                                           : std::vector<int64_t>{1, 7, 100, 4101});
      for (int64_t n : lengths) {
        const int64_t rows = 37;
        const std::vector<uint8_t> w = weight_rows(t, n, rows, rng);
        for (int B : {1, 8, 9, 33, 128}) {
          const Activations x = activations(t, n, B, rng, B == 9);
          ASSERT_TRUE(check_matmul(*k, t, n, rows, w, x, B, 0, rows));
          ASSERT_TRUE(check_matmul(*k, t, n, rows, w, x, B, 2, 35));
        }
      }
    }
  }
}

// Each output element of the product is its row's and token's vec_dot (so prefill equals decode).
TEST(Backends, MatmulElementsEqualVecDot) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(13);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::F16, GgmlType::F32}) {
      const int64_t n = t == GgmlType::Q6_K ? 768 : (quantised(t) ? 320 : 45);
      const int64_t rows = 11;
      const int B = 12;
      const std::vector<uint8_t> w = weight_rows(t, n, rows, rng);
      const Activations x = activations(t, n, B, rng, false);
      std::vector<float> out(size_t(rows) * B);
      for_type(*k, t).matmul({n, w.data(), row_bytes(t, n), 0, rows, x.data.data(), x.row_bytes, B,
                        out.data(), rows});
      for (int b = 0; b < B; ++b)
        for (int64_t r = 0; r < rows; ++r) {
          const float d = for_type(*k, t).vec_dot(n, w.data() + row_bytes(t, n) * size_t(r),
                                     x.data.data() + x.row_bytes * size_t(b));
          ASSERT_TRUE(same_floats(&out[size_t(b) * rows + size_t(r)], &d, 1))
              << k->name << " " << ggml_type_name(t) << " row " << r << " token " << b;
        }
    }
  }
}

// ---- float kernels ------------------------------------------------------------------------------

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
        got = k->f16.vec_dot(n, h.data(), b.data());
        want = S().f16.vec_dot(n, h.data(), b.data());
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

// The AVX2 vector exp itself against expf_r1pi: a sweep of all float bit patterns, and every float
// within 0.1 of the cut-offs -87.3 and 88.7, and a fine geometric sweep towards 0 (silu_mul above
// hides exp results below 2^-24 in 1 + e).
TEST(Backends, Avx2ExpSweepsFloats) {
  if (!kernels_avx2()) GTEST_SKIP() << "no AVX2 backend here";
  std::vector<float> x;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 251) x.push_back(from_bits(uint32_t(b)));
  for (float c : {-87.3f, 88.7f})
    for (float v = c - 0.1f; v <= c + 0.1f; v = std::nextafter(v, 1e9f)) x.push_back(v);
  for (float v = 0.1f; v > 1e-37f; v *= 0.9999f) {
    x.push_back(v);
    x.push_back(-v);
  }
  std::vector<float> got(x.size());
  expf_r1pi_avx2_unchecked(x.data(), got.data(), int64_t(x.size()));
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = expf_r1pi(x[i]);
    if (bits_of(got[i]) != bits_of(want) && bad++ < 5)
      ADD_FAILURE() << "exp(" << x[i] << " = 0x" << std::hex << bits_of(x[i]) << "): 0x" << bits_of(got[i])
                    << " vs 0x" << bits_of(want) << std::dec;
  }
  EXPECT_EQ(bad, 0u) << "of " << x.size();
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
        k->rope(got.data(), heads, head_dim, c.data(), s.data());
        S().rope(want.data(), heads, head_dim, c.data(), s.data());
        ASSERT_TRUE(same_floats(got.data(), want.data(), got.size()))
            << k->name << " head_dim " << head_dim << " heads " << heads;
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

// ---- the whole engine ------------------------------------------------------------------------------

const std::string& tiny_model() {
  static const std::string path = [] {
    std::string p = test::scratch_dir("kernels-backends") + "/tiny.gguf";
    MakeOptions o;
    o.preset = "tiny";
    o.seed = 3;
    o.progress = false;
    make_model(o, p);
    return p;
  }();
  return path;
}

std::string engine_sha(const std::string& backend, int threads, int batch) {
  const test::CommandResult r = test::run_command(
      "R1PI_BACKEND=" + backend + " " + test::bin_dir() + "/r1pi -m " + tiny_model() +
      " -p 'Once upon a time, in a land far away' -n 40 --temp 0 -c 256 -t " +
      std::to_string(threads) + " -b " + std::to_string(batch));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(backend + " kernels"), std::string::npos) << r.output;
  std::smatch sha;
  if (!std::regex_search(r.output, sha, std::regex(R"(\nsha256: ([0-9a-f]{64})\n)"))) {
    ADD_FAILURE() << "no sha256 in\n" << r.output;
    return "";
  }
  return sha[1].str();
}

TEST(Backends, EngineShaEqualsScalar) {
  const std::string want = engine_sha("scalar", 1, 64);
  ASSERT_FALSE(want.empty());
  FOR_EACH_BACKEND(k) {
    EXPECT_EQ(engine_sha(k->name, 2, 64), want) << k->name;
    EXPECT_EQ(engine_sha(k->name, 1, 5), want) << k->name;
  }
}

TEST(Backends, UnknownBackendIsRefused) {
  const test::CommandResult r = test::run_command("R1PI_BACKEND=bogus " + test::bin_dir() +
                                                  "/r1pi -m " + tiny_model() + " -p hi -n 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown backend"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace r1pi
