// Picks the backend once per process: the fastest one this build has for the CPU, unless
// R1PI_BACKEND names one (scalar, or any other backend of this build).
#include "neon/kernels.h"

#include <cstdlib>
#include <string>

#include "common/error.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__clang__)
#include <cpuid.h>
#endif

namespace r1pi {

// ---- x86: kernels_avx2.cpp is compiled with -mavx2 -mfma -mf16c (kernels_avx2_vnni.cpp with
// -mavxvnni too, kernels_avx512_vnni.cpp with AVX-512 F/BW/VL/DQ/VNNI), so nothing of them may run
// before the CPU checks below (baseline code).
#if defined(__x86_64__) || defined(__i386__)
// clang 14's __builtin_cpu_supports knows neither "f16c" nor "avxvnni": read those CPUID bits
// directly (the OS side, YMM state in XCR0, is what "avx2" already checks).
#if defined(__clang__)
namespace {
bool cpu_has_f16c() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
bool cpu_has_avxvnni() {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
}
}  // namespace
#else
namespace {
bool cpu_has_f16c() { return __builtin_cpu_supports("f16c"); }
bool cpu_has_avxvnni() { return __builtin_cpu_supports("avxvnni"); }
}  // namespace
#endif
const Kernels* kernels_avx2_unchecked();
const Kernels* kernels_avx2_vnni_unchecked();
const Kernels* kernels_avx512_vnni_unchecked();

const Kernels* kernels_avx2() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
  }();
  return supported ? kernels_avx2_unchecked() : nullptr;
}

const Kernels* kernels_avx2_vnni() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return cpu_has_avxvnni();
  }();
  return supported && kernels_avx2() ? kernels_avx2_vnni_unchecked() : nullptr;
}

// libgcc's checks include the OS: AVX-512 counts only where XCR0 enables its registers.
const Kernels* kernels_avx512_vnni() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  return supported && kernels_avx2() ? kernels_avx512_vnni_unchecked() : nullptr;
}
#else
const Kernels* kernels_avx2() { return nullptr; }
const Kernels* kernels_avx2_vnni() { return nullptr; }
const Kernels* kernels_avx512_vnni() { return nullptr; }
#endif
// ---- end x86

std::vector<const Kernels*> available_backends() {
  std::vector<const Kernels*> v;
  for (const Kernels* k :
       {kernels_neon_dotprod(), kernels_neon(), kernels_avx512_vnni(), kernels_avx2_vnni(),
        kernels_avx2()})
    if (k) v.push_back(k);
  v.push_back(&kernels_scalar());
  return v;
}

namespace {

// ---- ARM (kernels_neon.cpp): chosen at compile time. A dotprod build runs neon-dotprod (and can
// be forced to plain neon); a build without dotprod (Pi 4: -mcpu=cortex-a72) has only neon.
const Kernels* arm_default() {
  if (const Kernels* k = kernels_neon_dotprod()) return k;
  return kernels_neon();
}

const Kernels* arm_named(const std::string& name) {
  if (name == "neon-dotprod") return kernels_neon_dotprod();
  if (name == "neon") return kernels_neon();
  return nullptr;
}
// ---- end ARM

std::string available_names() {
  std::string names = "scalar";
  if (kernels_neon_dotprod()) names += ", neon-dotprod";
  if (kernels_neon()) names += ", neon";
  if (kernels_avx512_vnni()) names += ", avx512-vnni";
  if (kernels_avx2_vnni()) names += ", avx2-vnni";
  if (kernels_avx2()) names += ", avx2";
  return names;
}

const Kernels& select_backend() {
  const char* env = std::getenv("R1PI_BACKEND");
  if (env == nullptr || *env == '\0') {
    if (const Kernels* k = arm_default()) return *k;
    if (const Kernels* k = kernels_avx512_vnni()) return *k;
    if (const Kernels* k = kernels_avx2_vnni()) return *k;
    if (const Kernels* k = kernels_avx2()) return *k;
    return kernels_scalar();
  }
  const std::string wanted = env;
  if (wanted == "scalar") return kernels_scalar();
  if (const Kernels* k = arm_named(wanted)) return *k;
  if (wanted == "avx2" && kernels_avx2()) return *kernels_avx2();
  if (wanted == "avx2-vnni" && kernels_avx2_vnni()) return *kernels_avx2_vnni();
  if (wanted == "avx512-vnni" && kernels_avx512_vnni()) return *kernels_avx512_vnni();
#if defined(__x86_64__) || defined(__i386__)
  if (wanted == "avx2")
    throw Error("R1PI_BACKEND=avx2: this CPU lacks AVX2, FMA or F16C (available: " +
                available_names() + ")");
  if (wanted == "avx2-vnni")
    throw Error("R1PI_BACKEND=avx2-vnni: this CPU or compiler lacks AVX-VNNI (available: " +
                available_names() + ")");
  if (wanted == "avx512-vnni")
    throw Error("R1PI_BACKEND=avx512-vnni: this CPU or compiler lacks AVX-512 with VNNI (available: " +
                available_names() + ")");
#endif
  if (wanted == "avx2" || wanted == "avx2-vnni" || wanted == "avx512-vnni" ||
      wanted == "neon-dotprod" || wanted == "neon") {
    throw Error("R1PI_BACKEND=" + wanted + ": backend not available in this build (available: " +
                available_names() + ")");
  }
  throw Error("R1PI_BACKEND=" + wanted +
              ": unknown backend (known: scalar, avx512-vnni, avx2-vnni, avx2, neon-dotprod, neon)");
}

}  // namespace

const Kernels& kernels() {
  static const Kernels& selected = select_backend();
  return selected;
}

}  // namespace r1pi
