// Picks the backend once per process. Only the scalar reference exists so far; SIMD backends
// will be added here, chosen by CPU features unless R1PI_BACKEND names one.
#include "neon/kernels.h"

#include <cstdlib>
#include <string>

#include "common/error.h"

namespace r1pi {

namespace {

const Kernels& select_backend() {
  const char* env = std::getenv("R1PI_BACKEND");
  if (env == nullptr || *env == '\0') return kernels_scalar();
  const std::string wanted = env;
  if (wanted == "scalar") return kernels_scalar();
  if (wanted == "avx2" || wanted == "neon-dotprod" || wanted == "neon") {
    throw Error("R1PI_BACKEND=" + wanted +
                ": backend not available in this build (available: scalar)");
  }
  throw Error("R1PI_BACKEND=" + wanted +
              ": unknown backend (known: scalar, avx2, neon-dotprod, neon)");
}

}  // namespace

const Kernels& kernels() {
  static const Kernels& selected = select_backend();
  return selected;
}

}  // namespace r1pi
