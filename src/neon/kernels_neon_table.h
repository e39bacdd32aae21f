// The one table of a NEON backend, built from the same templates for both lane sums: PlainDot
// ("neon", kernels_neon.cpp) and SdotDot ("neon-dotprod", kernels_neon_dotprod.cpp, the only file
// compiled for the dot-product extension). Included by those two files only; each gets its own
// copy (anonymous namespace), compiled for its own instruction set.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include "neon/kernels.h"
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
          {GgmlType::MXFP4, entries<QuantOps<Dot, Mxfp4W>>()},
      }),
      R1PI_FLOAT_OPS(),
      .weighted_sum_f32 = weighted_sum<F32W>,
      .weighted_sum_f16 = weighted_sum<F16W>,
      .weighted_sum_q8_0 = weighted_sum_q8_0,
  };
}

}  // namespace
}  // namespace r1pi

#endif
