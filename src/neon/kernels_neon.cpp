// The NEON backends for 64-bit ARM, in two variants built from the same templates
// (kernels_neon_table.h):
//   "neon-dotprod"  Raspberry Pi 5 (Cortex-A76, ARMv8.2 dot product): one sdot per 16 bytes gives
//                   the recipe's four lane sums p_bj directly. Its table is kernels_neon_dotprod.cpp,
//                   the one file compiled for the dot-product extension; kernels.cpp hands it out
//                   only on a CPU that has it, so one binary runs on a Pi 4 and a Pi 5.
//   "neon"          Raspberry Pi 4 (Cortex-A72, plain ARMv8-A): smull/smull2 into 16-bit
//                   products, then pairwise widening adds (saddlp, addp) to the same four sums.
//                   This file.
// Both follow the recipe in kernels.h operation for operation, so every result has the scalar
// reference's bytes: the integer lane sums are exact, each lane folds its blocks with one fused
// vfmaq in block order, and reduce8 pairs the eight lanes the same way. The matrix products tile
// rows x tokens, but every output element keeps its own accumulators and block order, so each
// equals the vec_dot of its row and token bit for bit (and so does not depend on B or threads).
// (A NaN result is NaN here whenever it is in the reference, but which NaN payload an operation
// passes on follows the operand order the compiler picks, in the reference too: payloads are not
// part of the recipe.)
// The kernels are split by concern, as x86's are, into headers that only the two table files
// include:
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

#include "neon/expf_r1pi.h"
#include "neon/kernels_neon_table.h"

namespace r1pi {

namespace {
const Kernels kNeon = make_table<PlainDot>("neon");
}  // namespace

const Kernels* kernels_neon() { return &kNeon; }

bool expf_r1pi_neon(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp4(vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] = expf_r1pi(x[i]);
  return true;
}

}  // namespace r1pi

#else  // not 64-bit ARM with NEON

namespace r1pi {
const Kernels* kernels_neon() { return nullptr; }
bool expf_r1pi_neon(const float*, float*, int64_t) { return false; }
}  // namespace r1pi

#endif
