// r1pi-model quantize: a float GGUF (F32, F16 or BF16 matrices, as llama.cpp's converters write it)
// rewritten with its matrices in one weight type or in one of llama-quantize's mixes.
#pragma once
#include <string>

namespace r1pi {

// type: a type that can hold a matrix (ggml_matrix_type_names(): f32, f16, bf16, q8_0, q4_0, q4_1,
// q5_0, q5_1, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, mxfp4) or a mix (q4_k_m, q5_k_m, mxfp4_moe;
// quant_mix.h), any case. A
// single type is given to every matrix but output.weight, which becomes Q6_K for every block type
// but Q8_0, as llama-quantize's files have it.
// Vectors (norms, biases, rope_freqs) and the metadata are copied, general.file_type set. Throws
// r1pi::Error naming the tensor when a matrix is not F32/F16 or its rows are not whole blocks.
// threads: 0, one per core; the bytes do not depend on it.
void quantize_model(const std::string& in_path, const std::string& out_path, const std::string& type,
                    bool progress, int threads = 0);

}  // namespace r1pi
