// Picks the backend once per process: the fastest one this build has for the CPU, unless
// R1PI_BACKEND names one (scalar, or any other backend of this build). Also the one table of
// per-type facts (activation_type, for_type).
#include "neon/kernels.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include "common/error.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__clang__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace r1pi {

// ---- x86: kernels_avx2.cpp and kernels_x86_*.cpp are compiled with -mavx2 -mfma -mf16c
// (kernels_avx2_vnni.cpp with -mavxvnni too, kernels_avx512_vnni.cpp with AVX-512
// F/BW/VL/DQ/VNNI), so nothing of them may run before the CPU checks below (baseline code).
#if defined(__x86_64__) || defined(__i386__)
constexpr bool kX86 = true;

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
constexpr bool kX86 = false;

const Kernels* kernels_avx2() { return nullptr; }
const Kernels* kernels_avx2_vnni() { return nullptr; }
const Kernels* kernels_avx512_vnni() { return nullptr; }
#endif
// ---- end x86

// ---- ARM: kernels_neon_dotprod.cpp alone is compiled for the dot-product extension (ARMv8.2), the
// rest for plain ARMv8-A, so one binary serves a Pi 4 (Cortex-A72: "neon") and a Pi 5
// (Cortex-A76: "neon-dotprod"): the HWCAP bit Linux reports decides.
#if defined(__aarch64__)
constexpr bool kArm = true;
const Kernels* kernels_neon_dotprod_unchecked();

namespace {
bool cpu_has_dotprod() { return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0; }
}  // namespace

const Kernels* kernels_neon_dotprod() {
  static const bool supported = cpu_has_dotprod();
  return supported ? kernels_neon_dotprod_unchecked() : nullptr;
}

#if defined(__ARM_FEATURE_DOTPROD)
// Flags that target the extension everywhere (-mcpu=cortex-a76) make a binary that dies of SIGILL
// somewhere on a CPU without it, such as a Pi 4's Cortex-A72. Say so at start-up instead.
namespace {
[[maybe_unused]] const bool kCpuHasDotprod = [] {
  if (cpu_has_dotprod()) return true;
  std::fputs("error: this r1pi was built for ARM's dot-product extension (-mcpu=cortex-a76 or "
             "-march=armv8.2-a+dotprod: Raspberry Pi 5), which this CPU lacks; build it without "
             "those flags to run on any 64-bit ARM board\n",
             stderr);
  std::_Exit(1);
}();
}  // namespace
#endif
#else
constexpr bool kArm = false;
const Kernels* kernels_neon_dotprod() { return nullptr; }
#endif
// ---- end ARM

namespace {

// Every backend but the scalar reference, fastest first: the default is the first one present.
// Both ARM's and x86's are chosen at run time, by what the CPU has.
struct Backend {
  const char* name;
  const Kernels* (*get)();  // nullptr where this build or CPU lacks it
  const char* lacks;        // why, on a build for its architecture where the CPU decides
};
constexpr Backend kBackends[] = {
    {"neon-dotprod", kernels_neon_dotprod, kArm ? "this CPU lacks ARM's dot-product extension" : nullptr},
    {"neon", kernels_neon, nullptr},
    {"avx512-vnni", kernels_avx512_vnni, kX86 ? "this CPU or compiler lacks AVX-512 with VNNI" : nullptr},
    {"avx2-vnni", kernels_avx2_vnni, kX86 ? "this CPU or compiler lacks AVX-VNNI" : nullptr},
    {"avx2", kernels_avx2, kX86 ? "this CPU lacks AVX2, FMA or F16C" : nullptr},
};

std::string available_names() {
  std::string names = "scalar";
  for (const Backend& b : kBackends)
    if (b.get()) names += std::string(", ") + b.name;
  return names;
}

const Kernels& select_backend() {
  const char* env = std::getenv("R1PI_BACKEND");
  const std::string wanted = env ? env : "";
  if (wanted == "scalar") return kernels_scalar();
  for (const Backend& b : kBackends) {
    const Kernels* k = b.get();
    if (wanted.empty() && k) return *k;
    if (wanted != b.name) continue;
    if (k) return *k;
    throw Error("R1PI_BACKEND=" + wanted + ": " +
                (b.lacks ? b.lacks : "backend not available in this build") + " (available: " +
                available_names() + ")");
  }
  if (wanted.empty()) return kernels_scalar();
  std::string known = "scalar";
  for (const Backend& b : kBackends) known += std::string(", ") + b.name;
  throw Error("R1PI_BACKEND=" + wanted + ": unknown backend (known: " + known + ")");
}

size_t type_index(GgmlType weight) {
  const size_t i = kernel_type_index(weight);
  if (i == kKernelTypes.size())
    throw Error("no kernels for weight type " + std::string(ggml_type_name(weight)));
  return i;
}

}  // namespace

std::vector<const Kernels*> available_backends() {
  std::vector<const Kernels*> v;
  for (const Backend& b : kBackends)
    if (const Kernels* k = b.get()) v.push_back(k);
  v.push_back(&kernels_scalar());
  return v;
}

const Kernels& kernels() {
  static const Kernels& selected = select_backend();
  return selected;
}

GgmlType activation_type(GgmlType weight) { return kKernelTypeRows[type_index(weight)].activation; }

const TypeKernels& for_type(const Kernels& backend, GgmlType weight) {
  const size_t i = type_index(weight);
  const TypeKernels& own = backend.types[i];
  return own.vec_dot && own.matmul ? own : kernels_scalar().types[i];
}

}  // namespace r1pi
