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
#include "ggml/quantize.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const Kernels& S() { return kernels_scalar(); }

using namespace test;  // the kernel tests' helpers (test_support.h)

// ---- inputs ---------------------------------------------------------------------------------------

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

// The ARM backends of this build; prints the line scripts/test-aarch64 shows for each emulated CPU.
TEST(Backends, NeonSelection) {
  if (!kernels_neon()) GTEST_SKIP() << "no NEON backend in this build";
  std::printf("NEON backends in this build: %s%s; kernels() uses %s\n",
              kernels_neon_dotprod() ? "neon-dotprod, " : "", kernels_neon()->name, kernels().name);
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

// Zeros, signed zeros, subnormal blocks, d near FLT_MIN, infinities, NaNs and d at fp16's edge.
TEST(Backends, QuantizeQ8_0NonFinite) {
  std::vector<float> x(32 * 8, 0.0f);
  for (int i = 0; i < 32; ++i) x[i] = (i % 2) ? -0.0f : 0.0f;
  for (int i = 32; i < 64; ++i) x[i] = std::ldexp(float(i), -140);
  for (int i = 64; i < 96; ++i) x[i] = float(i - 80) * FLT_MIN * 2.0f;
  for (int i = 96; i < 128; ++i) x[i] = float(i - 110);
  x[100] = INFINITY;
  for (int i = 128; i < 160; ++i) x[i] = float(i - 140);
  x[130] = NAN;
  x[131] = -INFINITY;
  for (int i = 160; i < 192; ++i) x[i] = NAN;
  for (int i = 192; i < 224; ++i) x[i] = float(i - 200);
  x[195] = NAN;
  for (int i = 224; i < 256; ++i) x[i] = 65519.0f * 127.0f * (i % 2 ? 1 : -1);
  std::vector<block_q8_0> want(8);
  S().quantize_row_q8_0(x.data(), want.data(), 256);
  FOR_EACH_BACKEND(k) {
    std::vector<block_q8_0> got(8);
    k->quantize_row_q8_0(x.data(), got.data(), 256);
    EXPECT_TRUE(same_bytes(got.data(), want.data(), 8 * sizeof(block_q8_0))) << k->name;
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

// Many rows: backends that pass over groups of rows (AVX2's Q4_0 takes 5 or 6 tokens in two passes
// per 128 rows) start and end ranges inside and across the groups.
TEST(Backends, MatmulManyRowsInGroups) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(11);
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0}) {
      const int64_t n = 64, rows = 300;
      const std::vector<uint8_t> w = weight_rows(t, n, rows, rng);
      for (int B : {4, 5, 6, 7, 13}) {
        const Activations x = activations(t, n, B, rng, B == 5);
        const int64_t ranges[][2] = {{0, rows}, {1, 299}, {127, 129}, {100, 260}, {128, 256}};
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

// Every fp16 bit pattern as the weight scale (subnormals, inf, NaN) and many as the activation's:
// one block each.
TEST(Backends, QuantDotsWithEveryFp16Scale) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(21);
    block_q8_0 x, w8;
    block_q4_0 w4;
    block_q6_K w6;
    std::vector<block_q8_0> x6(8);
    auto fill = [&](void* p, size_t n) {
      for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(p)[i] = uint8_t(rng());
    };
    fill(&x, sizeof x);
    fill(&w8, sizeof w8);
    fill(&w4, sizeof w4);
    fill(&w6, sizeof w6);
    fill(x6.data(), x6.size() * sizeof(block_q8_0));
    for (block_q8_0& b : x6) b.d = small_half(rng);
    // Activations as quantize_row_q8_0 writes them: never -128.
    for (block_q8_0* b : {&x, &x6[0], &x6[1], &x6[2], &x6[3], &x6[4], &x6[5], &x6[6], &x6[7]})
      for (int8_t& q : b->qs) q = q == -128 ? int8_t(-127) : q;
    for (uint32_t h = 0; h < 65536; ++h) {
      w8.d = w4.d = w6.d = uint16_t(h);
      x.d = uint16_t(h * 7919u);
      ASSERT_EQ(bits_any_nan(for_type(*k, GgmlType::Q8_0).vec_dot(32, &w8, &x)), bits_any_nan(for_type(S(), GgmlType::Q8_0).vec_dot(32, &w8, &x)))
          << k->name << " h=" << h;
      ASSERT_EQ(bits_any_nan(for_type(*k, GgmlType::Q4_0).vec_dot(32, &w4, &x)), bits_any_nan(for_type(S(), GgmlType::Q4_0).vec_dot(32, &w4, &x)))
          << k->name << " h=" << h;
      if (h % 16 == 0) {
        ASSERT_EQ(bits_any_nan(for_type(*k, GgmlType::Q6_K).vec_dot(256, &w6, x6.data())),
                  bits_any_nan(for_type(S(), GgmlType::Q6_K).vec_dot(256, &w6, x6.data())))
            << k->name << " h=" << h;
      }
    }
  }
}

// The largest products: weights -128, activations +-127 (quantize_row_q8_0 never writes -128),
// every product +-16256, every lane sum +-65024, exact.
TEST(Backends, Q8_0ExtremeQuants) {
  std::vector<block_q8_0> w(4), x(4);
  for (block_q8_0& b : w) {
    b.d = fp32_to_fp16(1.0f);
    std::memset(b.qs, 0x80, sizeof b.qs);
  }
  for (int8_t q : {int8_t(-127), int8_t(127)}) {
    for (block_q8_0& b : x) {
      b.d = fp32_to_fp16(1.0f);
      std::memset(b.qs, q, sizeof b.qs);
    }
    const float want = -128.0f * float(q) * 128;
    EXPECT_EQ(for_type(S(), GgmlType::Q8_0).vec_dot(128, w.data(), x.data()), want);
    FOR_EACH_BACKEND(k) {
      EXPECT_EQ(for_type(*k, GgmlType::Q8_0).vec_dot(128, w.data(), x.data()), want) << k->name << " x " << int(q);
    }
  }
}

// ---- the whole engine ------------------------------------------------------------------------------

const std::string& tiny_model() {
  static const std::string path = test::make_model_file("kernels-backends", {.preset = "tiny", .seed = 3});
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
