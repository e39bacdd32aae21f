// The AVX2 backend once more, compiled with AVX-512 (F, BW, VL, DQ, VNNI) as well: the
// "avx512-vnni" table (kernels_avx2.cpp describes all three builds). The same bytes as "avx2";
// products of up to 8 tokens put two weight rows in each 512-bit register (few_tile_pairs). Where
// the compiler cannot target AVX-512 (CMakeLists.txt then leaves the flags out) this build simply
// has no such backend.
#include "neon/kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__AVX512VNNI__)
// GCC 12's AVX-512 intrinsics start some results from a self-initialised "undefined" register,
// which -Wmaybe-uninitialized reports at every use (a known false positive of the headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "neon/kernels_avx2.cpp"
#else
namespace r1pi {
const Kernels* kernels_avx512_vnni_unchecked() { return nullptr; }
}  // namespace r1pi
#endif
