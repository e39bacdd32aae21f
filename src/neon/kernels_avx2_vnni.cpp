// The AVX2 backend once more, compiled with -mavxvnni as well: the "avx2-vnni" table
// (kernels_avx2.cpp describes both). Where the compiler cannot target AVX-VNNI (CMakeLists.txt then
// leaves the flag out) this build simply has no such backend.
#include "neon/kernels.h"

#if defined(__AVXVNNI__)
#include "neon/kernels_avx2.cpp"
#else
namespace r1pi {
const Kernels* kernels_avx2_vnni_unchecked() { return nullptr; }
}  // namespace r1pi
#endif
