// Quantisation and dequantisation of rows (plain reference code; also what the model maker uses).
//
// Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4 and BF16 quantise exactly as ggml's
// reference quantisers (quantize_row_q4_0_ref, quantize_row_q4_K_ref, ...; the IQ4 types without
// an importance matrix) so that r1pi-model writes the bytes llama.cpp's tools would.
// Q8_0 is r1pi's activation quantiser, defined once for every backend:
//   amax = max |x| over the block; d = amax / 127; id = d != 0 ? 1/d : 0;
//   q = round_to_nearest_even(x * id)     (ties to even: what AVX2 and NEON round with natively)
//   the block stores fp16(d).
#pragma once
#include <cstdint>

#include "ggml/ggml_type.h"
#include "ggml/quant_blocks.h"

namespace r1pi {

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n);
void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n);
void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n);
void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n);
void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n);
void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n);
void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n);
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n);
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n);
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n);
void quantize_row_iq4_nl_ref(const float* x, block_iq4_nl* y, int64_t n);  // no importance matrix
void quantize_row_iq4_xs_ref(const float* x, block_iq4_xs* y, int64_t n);  // no importance matrix
void quantize_row_mxfp4_ref(const float* x, block_mxfp4* y, int64_t n);
void quantize_row_bf16(const float* x, uint16_t* y, int64_t n);

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n);
void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n);
void dequantize_row_q4_K(const block_q4_K* x, float* y, int64_t n);
void dequantize_row_q5_K(const block_q5_K* x, float* y, int64_t n);
void dequantize_row_q6_K(const block_q6_K* x, float* y, int64_t n);
void dequantize_row_f16(const uint16_t* x, float* y, int64_t n);
void dequantize_row_q2_K(const block_q2_K* x, float* y, int64_t n);
void dequantize_row_q3_K(const block_q3_K* x, float* y, int64_t n);
void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n);
void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n);
void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n);
void dequantize_row_iq4_nl(const block_iq4_nl* x, float* y, int64_t n);
void dequantize_row_iq4_xs(const block_iq4_xs* x, float* y, int64_t n);
void dequantize_row_mxfp4(const block_mxfp4* x, float* y, int64_t n);
void dequantize_row_bf16(const uint16_t* x, float* y, int64_t n);

// Any supported type (F32 is a copy). n must be a multiple of the type's block size.
void dequantize_row(GgmlType type, const void* x, float* y, int64_t n);
// Every supported type: ggml's reference quantisers, Q8_0 above, F16, F32. Writes ggml_row_bytes(type, n) bytes.
void quantize_row(GgmlType type, const float* x, void* y, int64_t n);

}  // namespace r1pi
