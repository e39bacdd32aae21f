// The "avx2" backend for x86-64 (AVX2 + FMA + F16C: Haswell and later, AMD Zen): the quantised
// products with the AVX2 policies, where maddubs + madd form the recipe's sums of four; the float
// ops are the ones every x86 backend shares (kernels_x86.h, which also has the rules for the x86
// kernel files). Byte for byte the scalar reference's results (recipe in kernels.h).
#include "neon/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "neon/kernels_x86_policies.h"

namespace r1pi {

namespace {

struct Avx2 {
  static constexpr int kVectorRegisters = 16;
  // maddubs forms pair sums in int16 (saturating: callers keep them in range), madd adds the pairs.
  static R1PI_INLINE __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
};

constexpr Kernels kAvx2 =
    x86_kernels("avx2", quant_entries<Q4_0Avx2<Avx2>>(), quant_entries<Q8_0Policy<Avx2>>(),
                quant_entries<Q6_KAvx2<Avx2>>());

}  // namespace

// Only kernels.cpp calls this, after checking the CPU (kernels_avx2() in kernels.h).
const Kernels* kernels_avx2_unchecked() { return &kAvx2; }

}  // namespace r1pi

#endif
