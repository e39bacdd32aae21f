// llama-quantize's type mixes (Q4_K_M, Q5_K_M), as `r1pi-model make --type` writes them: a file
// holds several types, and which tensor gets which follows llama.cpp's llama-quant.cpp, so that a
// made file has the bytes per layer of the file people download.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggml/ggml_type.h"

namespace r1pi {

struct QuantMix {
  std::string_view name;  // lower case, as llama-quantize's name: "q4_k_m"
  GgmlType base;          // every matrix but those below
  GgmlType more_bits;     // attn_v and ffn_down in the layers that use_more_bits picks; output
  uint32_t file_type;     // general.file_type: llama.cpp's LLAMA_FTYPE_MOSTLY_*
};

// The mix of that name (any case), or nullptr.
const QuantMix* quant_mix_named(std::string_view name);
std::vector<std::string> quant_mix_names();

// The type of the matrix named `name` (its GGUF name) in layer `layer` of `n_layers`; output is
// output.weight.
GgmlType mix_tensor_type(const QuantMix& mix, std::string_view name, uint32_t layer, uint32_t n_layers,
                         bool output);

// The type llama-quantize writes for a matrix it chose `type` for, whose rows are ne0 long: the
// same where whole blocks fit; else, as llama-quant.cpp falls back, Q8_0 for output.weight and
// Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K, IQ4_NL for IQ4_XS, then F16 if even those do not
// fit. Nothing when llama-quantize refuses the tensor (a 32-element type that does not fit).
std::optional<GgmlType> row_fallback(GgmlType type, uint64_t ne0, bool output);

}  // namespace r1pi
