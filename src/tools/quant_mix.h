// llama-quantize's type mixes (Q2_K, Q3_K_S/M/L, Q4_K_S/M, Q5_K_S/M, IQ4_XS, IQ4_NL, MXFP4_MOE), as `r1pi-model
// make --type` and `quantize` write them: a file holds several types, and which tensor gets which
// follows llama.cpp's llama-quant.cpp (llama_tensor_get_type, without an importance matrix), so
// that a made file has the bytes per layer of the file people download. (Q6_K's mix is the type
// itself: every matrix and the output Q6_K.)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggml/ggml_type.h"

namespace r1pi {

// Where a matrix sits, as llama-quant.cpp's rules ask.
enum class MixRole { AttnV, FfnDown, AttnOutput, Other };
struct MixPlace {
  MixRole role;
  uint32_t layer, n_layers;
  uint32_t gqa;  // query heads per KV head
  bool experts;  // a mixture's stacked experts (ffn_*_exps: llama-quant.cpp's ne[2] > 1)
};

struct QuantMix {
  std::string_view name;  // lower case, as llama-quantize's name: "q4_k_m"
  GgmlType base;          // every matrix the rule leaves alone
  uint32_t file_type;     // general.file_type: llama.cpp's LLAMA_FTYPE_MOSTLY_*
  GgmlType (*rule)(const MixPlace& at, GgmlType base);  // the mix's choices; base elsewhere
  GgmlType output = GgmlType::Q6_K;  // output.weight's type
};

// The mix of that name (any case), or nullptr.
const QuantMix* quant_mix_named(std::string_view name);
std::vector<std::string> quant_mix_names();

// The type of the matrix named `name` (its GGUF name) in layer `layer` of `n_layers`; output is
// output.weight; gqa the model's query heads per KV head.
GgmlType mix_tensor_type(const QuantMix& mix, std::string_view name, uint32_t layer, uint32_t n_layers,
                         bool output, uint32_t gqa);

// The type llama-quantize writes for a matrix it chose `type` for, whose rows are ne0 long: the
// same where whole blocks fit; else, as llama-quant.cpp falls back, Q8_0 for output.weight and
// Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K, IQ4_NL for Q2_K, Q3_K and IQ4_XS, then F16 if those do not
// fit. Nothing when llama-quantize refuses the tensor (a 32-element type that does not fit).
std::optional<GgmlType> row_fallback(GgmlType type, uint64_t ne0, bool output);

}  // namespace r1pi
