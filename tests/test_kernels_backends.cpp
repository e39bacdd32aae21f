// Every backend this build runs on this CPU (available_backends(): avx512-vnni, avx2-vnni, avx2 on
// x86, neon / neon-dotprod on ARM) against the scalar reference, byte for byte (memcmp): each
// Kernels entry on random and extreme inputs, the matrix products for every batch size 1..17 (and
// large ones) over odd row ranges, and the whole engine's output on a generated model. The
// per-type tests run over every type of kKernelTypes, on weights from the type's own quantiser
// (ggml_traits; the inputs are kernel_inputs.h), so a new type is compared without a change here.
// Portable code only, so that the same file runs natively and under qemu; with no SIMD backend the
// comparisons are skipped.
//
// Inputs are finite (the engine never produces NaN or infinite activations), except where a test
// says otherwise: infinite fp16 weight scales, 1e30-scaled activations whose fp16 scale overflows,
// and a NaN through softmax and silu_mul. Any NaN these produce must match bit for bit too.
#include <gtest/gtest.h>

#include <algorithm>
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

#include "common/error.h"
#include "ggml/fp16.h"
#include "neon/expf_r1pi.h"
#include "neon/kernels.h"
#include "ggml/quantize.h"
#include "kernel_inputs.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const Kernels& S() { return kernels_scalar(); }

using namespace test;  // the kernel tests' helpers (test_support.h)

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
    // Every entry filled in but the types' (the pointers before and after the type table).
    const auto* p = reinterpret_cast<const char*>(k);
    for (size_t at = offsetof(Kernels, quantize_row_q8_0); at < sizeof(Kernels); at += sizeof(void*)) {
      if (at == offsetof(Kernels, types)) at += sizeof(TypeTable);
      EXPECT_NE(*reinterpret_cast<const void* const*>(p + at), nullptr) << k->name << " at byte " << at;
    }
    // A type's entry is whole or empty; the scalar reference has every one.
    for (size_t i = 0; i < kKernelTypes.size(); ++i) {
      const TypeKernels& e = k->types[i];
      EXPECT_EQ(e.vec_dot == nullptr, e.matmul == nullptr) << k->name << " " << ggml_type_name(kKernelTypes[i]);
      if (k == &S()) {
        EXPECT_NE(e.vec_dot, nullptr) << ggml_type_name(kKernelTypes[i]);
      } else if (!e.vec_dot) {
        std::printf("note: %s has no kernels of its own for %s: the scalar ones run\n", k->name,
                    std::string(ggml_type_name(kKernelTypes[i])).c_str());
      }
    }
  }
}

// A type a backend leaves empty gets the scalar reference's entry, the others keep theirs.
TEST(Backends, EmptyEntryFallsBackToScalar) {
  for (const Kernels* k : available_backends()) {
    for (size_t i = 0; i < kKernelTypes.size(); ++i) {
      Kernels partial = *k;
      partial.types[i] = {};
      for (size_t j = 0; j < kKernelTypes.size(); ++j) {
        const TypeKernels& got = for_type(partial, kKernelTypes[j]);
        const TypeKernels& want = i == j ? S().types[j] : for_type(*k, kKernelTypes[j]);
        EXPECT_EQ(got.vec_dot, want.vec_dot) << k->name << " without " << i << ", type " << j;
        EXPECT_EQ(got.matmul, want.matmul) << k->name << " without " << i << ", type " << j;
      }
    }
  }
  EXPECT_THROW(for_type(S(), GgmlType(16)), Error);  // IQ2_XXS: no kernels
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
  std::printf("NEON backends on this CPU: %s%s; kernels() uses %s\n",
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

// Every type's vec_dot: quantised types over 1, 3, 9 and 128 + 1 blocks, float ones over tails.
TEST(Backends, VecDotsSameBytes) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(3);
    for (GgmlType t : kKernelTypes) {
      const int64_t b = block_elements(t);
      const std::vector<int64_t> lengths = quantised(t) ? std::vector<int64_t>{b, 3 * b, 9 * b, 4096 + b}
                                                        : std::vector<int64_t>{1, 7, 13, 100, 4101};
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
    for (GgmlType t : kKernelTypes) {
      if (!quantised(t)) continue;
      const int64_t n = std::max<int64_t>(128, 2 * block_elements(t));
      const std::vector<uint8_t> w = weight_rows(t, n, 8, rng, true);
      // 3 tokens (decode's paths) and 9 (the batch paths', two token tiles).
      for (int B : {3, 9}) {
        const Activations x = activations(t, n, B, rng, true);
        EXPECT_TRUE(check_matmul(*k, t, n, 8, w, x, B, 0, 8));
      }
    }
  }
}

// Every batch size 1..17 and row ranges that start and end off any tile boundary.
TEST(Backends, MatmulEveryBatchAndRowRange) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(7);
    for (GgmlType t : kKernelTypes) {
      const int64_t n = quantised(t) ? std::max<int64_t>(96, 2 * block_elements(t)) : 13;
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
    for (GgmlType t : kKernelTypes) {
      const int64_t n = whole_blocks(t, 64), rows = 300;
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
    for (GgmlType t : kKernelTypes) {
      const int64_t b = block_elements(t);
      const std::vector<int64_t> lengths = quantised(t) ? std::vector<int64_t>{b, whole_blocks(t, 288), 4096 + b}
                                                        : std::vector<int64_t>{1, 7, 100, 4101};
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

// Q4_1 and Q5_1 take eight consecutive blocks as a super-block: a row of 32k elements ends in a
// group of k % 8 blocks. Every size of the last group, alone and after whole groups.
TEST(Backends, Min32RowsEndingInPartialGroups) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(23);
    for (GgmlType t : {GgmlType::Q4_1, GgmlType::Q5_1}) {
      for (int64_t blocks = 1; blocks <= 17; ++blocks) {
        const int64_t n = 32 * blocks, rows = 6;
        const std::vector<uint8_t> w = weight_rows(t, n, rows, rng, true);
        for (int B : {1, 3, 5}) {
          const Activations x = activations(t, n, B, rng, B == 3);
          ASSERT_TRUE(check_matmul(*k, t, n, rows, w, x, B, 0, rows));
        }
      }
    }
  }
}

// Each output element of the product is its row's and token's vec_dot (so prefill equals decode).
TEST(Backends, MatmulElementsEqualVecDot) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(13);
    for (GgmlType t : kKernelTypes) {
      const int64_t n = quantised(t) ? whole_blocks(t, std::max<int64_t>(320, 3 * block_elements(t))) : 45;
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

// Every fp16 bit pattern as the weight scale (subnormals, inf, NaN) of one block of each quantised
// type with a known scale (kTypeExtras), and for 32-element blocks many as the activation's. (Every
// 16th pattern for super-blocks of 256, whose scale of the mins, where they have one, takes many.)
TEST(Backends, QuantDotsWithEveryFp16Scale) {
  FOR_EACH_BACKEND(k) {
    std::mt19937 rng(21);
    for (GgmlType t : kKernelTypes) {
      const TypeExtras* e = extras(t);
      if (!quantised(t) || !e || e->scale_offset == SIZE_MAX) continue;
      const int64_t n = block_elements(t);
      std::vector<uint8_t> w(row_bytes(t, n));
      std::vector<block_q8_0> x(size_t(n / 32));
      for (uint8_t& v : w) v = uint8_t(rng());
      for (block_q8_0& b : x) {
        b.d = small_half(rng);
        for (int8_t& q : b.qs) {
          q = int8_t(rng());
          if (q == -128) q = -127;  // as quantize_row_q8_0 writes them: never -128
        }
      }
      for (uint32_t h = 0; h < 65536; h += x.size() == 1 ? 1 : 16) {
        const uint16_t d = uint16_t(h);
        std::memcpy(w.data() + e->scale_offset, &d, sizeof d);
        if (e->min_offset != SIZE_MAX) {
          const uint16_t dmin = uint16_t(h * 40503u);
          std::memcpy(w.data() + e->min_offset, &dmin, sizeof dmin);
        }
        if (x.size() == 1) x[0].d = uint16_t(h * 7919u);
        ASSERT_EQ(bits_any_nan(for_type(*k, t).vec_dot(n, w.data(), x.data())),
                  bits_any_nan(for_type(S(), t).vec_dot(n, w.data(), x.data())))
            << k->name << " " << ggml_type_name(t) << " h=" << h;
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

std::string engine_sha(const std::string& backend, int threads, int batch) {
  const test::CommandResult r = test::run_command(
      "R1PI_BACKEND=" + backend + " " + test::bin_dir() + "/r1pi -m " + test::tiny_model_file(3) +
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
                                                  "/r1pi -m " + test::tiny_model_file(3) + " -p hi -n 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown backend"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace r1pi
