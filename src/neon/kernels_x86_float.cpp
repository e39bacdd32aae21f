// The x86 float matrix products and attention's weighted sums (kernels_x86_float.h), built once
// with AVX2 + FMA + F16C for every x86 backend (kernels_x86.h has the rules for these files); the
// AVX-512 backend builds the products again with its 32 registers (kernels_avx512_vnni.cpp).
#include "neon/kernels_x86_float.h"

#if defined(__x86_64__) || defined(__i386__)

namespace r1pi {

namespace x86 {
void weighted_sum_q8_0(const WeightedSumArgs& a) { weighted_q8_0(a); }
void weighted_sum_f32(const WeightedSumArgs& a) { weighted_sum<FloatRow::F32>(a); }
void weighted_sum_f16(const WeightedSumArgs& a) { weighted_sum<FloatRow::F16>(a); }
void matmul_f16_f32(const MatmulArgs& a) { matmul_float<FloatRow::F16, 16>(a); }
void matmul_bf16_f32(const MatmulArgs& a) { matmul_float<FloatRow::BF16, 16>(a); }
void matmul_f32_f32(const MatmulArgs& a) { matmul_float<FloatRow::F32, 16>(a); }
}  // namespace x86

}  // namespace r1pi

#endif
