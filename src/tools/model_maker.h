// r1pi-model's commands: make a random-weight GGUF of any architecture r1pi runs, import a llama2.c checkpoint, show a file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ggml/ggml_type.h"
#include "tools/quant_mix.h"

namespace r1pi {

struct MakeOptions {
  std::string arch = "llama";        // general.architecture (model/arch/)
  std::string preset = "tiny";       // the architecture's presets: llama's "tiny", "1B", "8B"
                                     // (explicit fields below override)
  std::optional<uint32_t> dim{}, n_layers{}, n_heads{}, n_kv_heads{}, ffn_dim{}, n_vocab{}, n_ctx{};
  uint64_t seed = 1;
  GgmlType matrix_type = GgmlType::Q4_0;   // attention/FFN/embedding matrices
  GgmlType output_type = GgmlType::Q6_K;   // output.weight: Q6_K (as llama.cpp's Q4_0 files) or Q4_0
  const QuantMix* mix = nullptr;           // a mix (quant_mix.h) instead of the two types above
  bool tied_output = false;                // omit output.weight (also when the preset's model ties it)
  std::string tokenizer_json{};            // HF tokenizer.json; empty: built-in byte vocabulary
  bool deepseek_specials = false;          // name specials as DeepSeek-R1-Distill does
  bool progress = true;                    // progress on stderr when it is a terminal
  int threads = 0;                         // quantising threads (0: one per core); the bytes do not change
};
// Streams the file (memory use independent of the model size). Throws r1pi::Error.
void make_model(const MakeOptions& options, const std::string& out_path);

// Converts a llama2.c checkpoint (float32, shared or separate classifier) to an F32 GGUF.
// tokenizer_bin: optional llama2.c tokenizer.bin; without it, placeholder pieces are written.
void import_llama2c(const std::string& checkpoint_path, const std::string& out_path,
                    const std::string& tokenizer_bin = "");

// Prints metadata and tensors (type, shape, bytes) of a GGUF file.
void print_model_info(const std::string& path, bool all_metadata);

}  // namespace r1pi
