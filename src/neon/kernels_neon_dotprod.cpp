// The "neon-dotprod" backend's table (kernels_neon.cpp says what it is): the only file built for
// ARM's dot-product extension (CMakeLists.txt adds -march=armv8.2-a+dotprod to it where the rest of
// the build targets plain ARMv8-A), so nothing of it may run before kernels.cpp has seen the
// extension in the CPU's hardware capabilities.
#include "neon/kernels.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)

#include "neon/kernels_neon_table.h"

namespace r1pi {

namespace {
const Kernels kNeonDotprod = make_table<SdotDot>("neon-dotprod");
}  // namespace

const Kernels* kernels_neon_dotprod_unchecked() { return &kNeonDotprod; }

}  // namespace r1pi

#else  // not ARM, or a compiler that cannot target the extension

namespace r1pi {
const Kernels* kernels_neon_dotprod_unchecked() { return nullptr; }
}  // namespace r1pi

#endif
