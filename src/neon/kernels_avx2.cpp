// The "avx2" backend for x86-64 (AVX2 + FMA + F16C: Haswell and later, AMD Zen): the quantised
// products with the AVX2 policies, where maddubs + madd form the recipe's sums of four; the float
// ops are the ones every x86 backend shares (kernels_x86.h, which also has the rules for the x86
// kernel files). Byte for byte the scalar reference's results (recipe in kernels.h).
#include "neon/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "neon/kernels_avx2_q4_0_batch.h"
#include "neon/kernels_x86_super_block_policies.h"

namespace r1pi {

namespace {

struct Avx2 {
  static constexpr int kVectorRegisters = 16;
  // maddubs forms pair sums in int16 (saturating: callers keep them in range), madd adds the pairs.
  static R1PI_INLINE __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
};

// Q4_0: up to kFewTokens (4) tokens lane-major with token-side offsets; more with the tokens across
// the registers (kernels_avx2_q4_0_batch.h) in tiles of 8, where a last tile of 1 to 4 tokens goes
// the lane-major way (a padded tile would compute 8). 5 or 6 tokens go lane-major as 4 and the rest,
// in groups of kRestRowGroup rows so that the second pass finds the group's weights in cache: less
// arithmetic than one padded tile (bench/README.md).
constexpr int64_t kRestRowGroup = 128;

void matmul_q4_0_avx2(const MatmulArgs& a) {
  using P = Q4_0Avx2<Avx2>;
  constexpr int kFew = kFewTokens<P>;
  if (a.B <= kFew) return matmul_quant<P>(a);
  const auto part = [&](int t0, int B, int64_t r0, int64_t r1) {
    MatmulArgs p = a;
    p.x += size_t(t0) * a.x_row_bytes;
    p.out += int64_t(t0) * a.out_stride;
    p.B = B;
    p.r0 = r0;
    p.r1 = r1;
    return p;
  };
  if (a.B <= 6) {
    for (int64_t rg = a.r0; rg < a.r1; rg += kRestRowGroup) {
      const int64_t rg1 = min64(a.r1, rg + kRestRowGroup);
      matmul_quant<P>(part(0, kFew, rg, rg1));
      matmul_quant<P>(part(kFew, a.B - kFew, rg, rg1));
    }
    return;
  }
  const int rest = a.B % 8 <= kFew ? a.B % 8 : 0;
  matmul_q4_0_token_lanes(part(0, a.B - rest, a.r0, a.r1));
  if (rest > 0) matmul_quant<P>(part(a.B - rest, rest, a.r0, a.r1));
}

constexpr Kernels kAvx2 = x86_kernels("avx2", {
    {GgmlType::Q4_0, {.vec_dot = quant_entries<Q4_0Avx2<Avx2>>().vec_dot, .matmul = matmul_q4_0_avx2}},
    {GgmlType::Q8_0, quant_entries<Q8_0Policy<Avx2>>()},
    {GgmlType::Q5_0, quant_entries<Q5_0Policy<Avx2>>()},
    {GgmlType::IQ4_NL, quant_entries<Iq4NlPolicy<Avx2>>()},
    {GgmlType::Q6_K, quant_entries<Q6_KAvx2<Avx2>>()},
    {GgmlType::Q4_K, min_term_entries<Q4_KPolicy<Avx2>>()},
    {GgmlType::Q5_K, min_term_entries<Q5_KPolicy<Avx2>>()},
    {GgmlType::Q4_1, min_term_entries<Q4_1Policy<Avx2>>()},
    {GgmlType::Q5_1, min_term_entries<Q5_1Policy<Avx2>>()},
    {GgmlType::IQ4_XS, min_term_entries<Iq4XsPolicy<Avx2>>()},
    {GgmlType::Q2_K, min_term_entries<Q2_KPolicy<Avx2>>()},
    {GgmlType::Q3_K, min_term_entries<Q3_KPolicy<Avx2>>()},
    {GgmlType::MXFP4, quant_entries<Mxfp4Policy<Avx2>>()},
});

}  // namespace

// Only kernels.cpp calls this, after checking the CPU (kernels_avx2() in kernels.h).
const Kernels* kernels_avx2_unchecked() { return &kAvx2; }

}  // namespace r1pi

#endif
