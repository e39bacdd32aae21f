// The "avx2-vnni" backend: AVX2 + FMA + F16C with AVX-VNNI (Intel Alder Lake / Sapphire Rapids and
// later, AMD Zen 5): the VNNI policies, where one vpdpbusd does the work of maddubs + madd + add
// (as sdot does on the Pi), with the same bytes. Where the compiler cannot target AVX-VNNI
// (CMakeLists.txt then leaves the flag out) this build simply has no such backend.
#include "neon/kernels.h"

#if defined(__AVXVNNI__)

#include "neon/kernels_x86_super_block_policies.h"

namespace r1pi {

namespace {

struct AvxVnni {
  static constexpr int kVectorRegisters = 16;
  static R1PI_INLINE __m256i dot4_add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_dpbusd_avx_epi32(acc, u, s);
  }
};

constexpr Kernels kAvx2Vnni = x86_kernels("avx2-vnni", {
    {GgmlType::Q4_0, quant_entries<Q4_0Vnni<AvxVnni>>()},
    {GgmlType::Q8_0, quant_entries<Q8_0Policy<AvxVnni>>()},
    {GgmlType::Q5_0, quant_entries<Q5_0Policy<AvxVnni>>()},
    {GgmlType::IQ4_NL, quant_entries<Iq4NlPolicy<AvxVnni>>()},
    {GgmlType::Q6_K, quant_entries<Q6_KVnni<AvxVnni>>()},
    {GgmlType::Q4_K, min_term_entries<Q4_KPolicy<AvxVnni>>()},
    {GgmlType::Q5_K, min_term_entries<Q5_KPolicy<AvxVnni>>()},
    {GgmlType::Q4_1, min_term_entries<Q4_1Policy<AvxVnni>>()},
    {GgmlType::Q5_1, min_term_entries<Q5_1Policy<AvxVnni>>()},
    {GgmlType::IQ4_XS, min_term_entries<Iq4XsPolicy<AvxVnni>>()},
    {GgmlType::Q2_K, min_term_entries<Q2_KPolicy<AvxVnni>>()},
    {GgmlType::Q3_K, min_term_entries<Q3_KPolicy<AvxVnni>>()},
    {GgmlType::MXFP4, quant_entries<Mxfp4Policy<AvxVnni>>()},
});

}  // namespace

// Only kernels.cpp calls this, after checking the CPU (kernels_avx2_vnni() in kernels.h).
const Kernels* kernels_avx2_vnni_unchecked() { return &kAvx2Vnni; }

}  // namespace r1pi

#else
namespace r1pi {
const Kernels* kernels_avx2_vnni_unchecked() { return nullptr; }
}  // namespace r1pi
#endif
