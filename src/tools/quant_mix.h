// llama-quantize's type mixes (Q4_K_M, Q5_K_M), as `r1pi-model make --type` writes them: a file
// holds several types, and which tensor gets which follows llama.cpp's llama-quant.cpp, so that a
// made file has the bytes per layer of the file people download.
#pragma once
#include <cstdint>
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

}  // namespace r1pi
