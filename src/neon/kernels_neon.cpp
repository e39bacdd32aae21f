// The NEON backends for 64-bit ARM, in two variants built from the same templates:
//   "neon-dotprod"  Raspberry Pi 5 (Cortex-A76, ARMv8.2 dot product): one sdot per 16 bytes gives
//                   the recipe's four lane sums p_bj directly. Compiled only when the compiler
//                   targets dotprod (__ARM_FEATURE_DOTPROD: -mcpu=cortex-a76 or
//                   -march=armv8.2-a+dotprod); such a binary raises SIGILL on a CPU without it.
//   "neon"          Raspberry Pi 4 (Cortex-A72, plain ARMv8-A): smull/smull2 into 16-bit
//                   products, then pairwise widening adds (saddlp, addp) to the same four sums.
// Both follow the recipe in kernels.h operation for operation, so every result has the scalar
// reference's bytes: the integer lane sums are exact, each lane folds its blocks with one fused
// vfmaq in block order, and reduce8 pairs the eight lanes the same way. The matrix products tile
// rows x tokens, but every output element keeps its own accumulators and block order, so each
// equals the vec_dot of its row and token bit for bit (and so does not depend on B or threads).
// (A NaN result is NaN here whenever it is in the reference, but which NaN payload an operation
// passes on follows the operand order the compiler picks, in the reference too: payloads are not
// part of the recipe.)
// This file holds the two tables; their kernels are split by concern, as x86's are, into headers
// that only this file includes (the two tables and what they point at stay one translation unit):
//   kernels_neon_shared.h    helpers, float row elements, the rows x tokens tiling of the products
//   kernels_neon_quant.h     the quantised products of 32-element blocks, templates over the
//                            lane sums
//   kernels_neon_super_block.h  those of 256-element super-blocks (the K-quants, IQ4_XS)
//   kernels_neon_float.h     the float products
//   kernels_neon_ops.h       the Q8_0 quantiser and the float ops
//   kernels_neon_weighted.h  attention's weighted sums
// On other machines this file compiles to accessors returning nullptr (expf_r1pi_neon: false).
#include "neon/kernels.h"
#include "neon/kernels_neon.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <sys/auxv.h>

#include <cstdio>
#include <cstdlib>

#include "neon/expf_r1pi.h"
#include "neon/kernels_neon_float.h"
#include "neon/kernels_neon_ops.h"
#include "neon/kernels_neon_quant.h"
#include "neon/kernels_neon_shared.h"
#include "neon/kernels_neon_super_block.h"
#include "neon/kernels_neon_weighted.h"

namespace r1pi {

namespace {

template <class Dot>
constexpr Kernels make_table(const char* name) {
  return Kernels{
      .name = name,
      .quantize_row_q8_0 = quantize_row_q8_0,
      .types = by_type({
          {GgmlType::F32, entries<FloatOps<F32W>>()},
          {GgmlType::F16, entries<FloatOps<F16W>>()},
          {GgmlType::BF16, entries<FloatOps<BF16W>>()},
          {GgmlType::Q4_0, entries<QuantOps<Dot, Q4_0W>>()},
          {GgmlType::Q8_0, entries<QuantOps<Dot, Q8_0W>>()},
          {GgmlType::Q4_1, entries<QuantOps<Dot, Q4_1W>>()},
          {GgmlType::Q5_0, entries<QuantOps<Dot, Q5_0W>>()},
          {GgmlType::Q5_1, entries<QuantOps<Dot, Q5_1W>>()},
          {GgmlType::IQ4_NL, entries<QuantOps<Dot, Iq4NlW>>()},
          {GgmlType::Q6_K, entries<SuperBlockOps<Dot, Q6_KW>>()},
          {GgmlType::Q4_K, entries<SuperBlockOps<Dot, Q4_KW>>()},
          {GgmlType::Q5_K, entries<SuperBlockOps<Dot, Q5_KW>>()},
          {GgmlType::IQ4_XS, entries<SuperBlockOps<Dot, Iq4XsW>>()},
          {GgmlType::Q3_K, entries<SuperBlockOps<Dot, Q3_KW>>()},
          {GgmlType::Q2_K, entries<SuperBlockOps<Dot, Q2_KW>>()},
      }),
      R1PI_FLOAT_OPS(),
      .weighted_sum_f32 = weighted_sum<F32W>,
      .weighted_sum_f16 = weighted_sum<F16W>,
      .weighted_sum_q8_0 = weighted_sum_q8_0,
  };
}

const Kernels kNeon = make_table<PlainDot>("neon");
#if defined(__ARM_FEATURE_DOTPROD)
const Kernels kNeonDotprod = make_table<SdotDot>("neon-dotprod");

// A dotprod build (the whole program is compiled for the Cortex-A76) dies of SIGILL on a CPU
// without the extension, such as a Pi 4's Cortex-A72. Say so at start-up instead.
[[maybe_unused]] const bool kCpuHasDotprod = [] {
  if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) return true;
  std::fputs("error: this r1pi was built for ARM's dot-product extension (-mcpu=cortex-a76 or "
             "-march=armv8.2-a+dotprod: Raspberry Pi 5), which this CPU lacks; build it with "
             "-mcpu=cortex-a72 (Raspberry Pi 4) or -march=armv8-a\n",
             stderr);
  std::_Exit(1);
}();
#endif

}  // namespace

const Kernels* kernels_neon() { return &kNeon; }

bool expf_r1pi_neon(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp4(vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] = expf_r1pi(x[i]);
  return true;
}

const Kernels* kernels_neon_dotprod() {
#if defined(__ARM_FEATURE_DOTPROD)
  return &kNeonDotprod;
#else
  return nullptr;
#endif
}

}  // namespace r1pi

#else  // not 64-bit ARM with NEON

namespace r1pi {
const Kernels* kernels_neon() { return nullptr; }
const Kernels* kernels_neon_dotprod() { return nullptr; }
bool expf_r1pi_neon(const float*, float*, int64_t) { return false; }
}  // namespace r1pi

#endif
