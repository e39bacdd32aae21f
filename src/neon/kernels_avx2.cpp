// The "avx2" backend for x86-64 (AVX2 + FMA + F16C: Haswell and later, AMD Zen): the quantised
// products with the AVX2 policies, where maddubs + madd form the recipe's sums of four; the float
// ops are the ones every x86 backend shares (kernels_x86.h, which also has the rules for the x86
// kernel files). Byte for byte the scalar reference's results (recipe in kernels.h).
#include "neon/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "neon/kernels_avx2_q4_0_batch.h"

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
// the lane-major way (a padded tile would compute 8).
void matmul_q4_0_avx2(const MatmulArgs& a) {
  using P = Q4_0Avx2<Avx2>;
  if (a.B <= kFewTokens<P>) return matmul_quant<P>(a);
  if (a.r1 <= a.r0) return;
  const int rest = a.B % 8 <= kFewTokens<P> ? a.B % 8 : 0;
  MatmulArgs tiles = a;
  tiles.B = a.B - rest;
  matmul_q4_0_token_lanes(tiles);
  if (rest == 0) return;
  MatmulArgs tail = a;
  tail.x += size_t(tiles.B) * a.x_row_bytes;
  tail.out += int64_t(tiles.B) * a.out_stride;
  tail.B = rest;
  matmul_quant<P>(tail);
}

constexpr Kernels avx2_kernels() {
  Kernels k = x86_kernels("avx2", quant_entries<Q4_0Avx2<Avx2>>(), quant_entries<Q8_0Policy<Avx2>>(),
                          quant_entries<Q6_KAvx2<Avx2>>());
  k.q4_0.matmul = matmul_q4_0_avx2;
  return k;
}
constexpr Kernels kAvx2 = avx2_kernels();

}  // namespace

// Only kernels.cpp calls this, after checking the CPU (kernels_avx2() in kernels.h).
const Kernels* kernels_avx2_unchecked() { return &kAvx2; }

}  // namespace r1pi

#endif
