// The shapes r1pi-model writes, as ModelConfig (the type the loader reads them back into): the
// presets of real models, explicit overrides, and the checks that make a shape one
// ModelConfig::from_gguf will accept.
#pragma once
#include <cstdint>
#include <string>

#include "ggml/ggml_type.h"
#include "model/model_config.h"

namespace r1pi {

struct MakeOptions;

// The preset of options.arch named options.preset, with the explicit fields of options applied,
// RoPE factors computed for the final head size, and rope_dim / head_dim resolved. n_tokenizer_tokens
// (0: built-in byte vocabulary) is the tokenizer's size: a preset's vocabulary grows to fit it, an
// explicit --vocab must hold it. Throws r1pi::Error naming the known presets, or on a shape the
// runtime cannot load.
ModelConfig resolve_shape(const MakeOptions& options, uint32_t n_tokenizer_tokens);

// Every preset by architecture: "llama: tiny, 1B, 8B; qwen2: ...".
std::string preset_names();

// The configuration's sizes (ModelConfig::check_sizes), and every matrix row a whole number of
// blocks of its type. Throws r1pi::Error("<context>: ...").
void check_shape(const ModelConfig& shape, GgmlType matrix_type, GgmlType output_type, bool tied,
                 const std::string& context);

}  // namespace r1pi
