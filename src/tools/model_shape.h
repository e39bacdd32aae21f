// The hyper-parameters r1pi-model writes: the presets, explicit overrides, and the checks that make
// a shape one LlamaConfig::from_gguf will accept.
#pragma once
#include <cstdint>
#include <string>

#include "ggml/ggml_type.h"
#include "model/llama_config.h"

namespace r1pi {

struct MakeOptions;

// llama3 RoPE frequency scaling (Llama 3.1's rope_scaling), stored as the rope_freqs.weight tensor.
struct Llama3RopeScaling {
  float factor = 8.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  uint32_t original_context = 8192;
};

struct ModelShape {
  std::string name{};      // general.name
  uint32_t dim = 0;
  uint32_t n_layers = 0;
  uint32_t n_heads = 0;
  uint32_t n_kv_heads = 0;
  uint32_t ffn_dim = 0;
  uint32_t n_vocab = 0;
  uint32_t n_ctx = 0;      // llama.context_length
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  uint32_t rope_dim = 0;     // dimensions of a head that RoPE rotates (0: the whole head)
  bool rope_scaled = false;  // write rope_freqs.weight from rope_scaling
  Llama3RopeScaling rope_scaling{};

  uint32_t head_dim() const { return dim / n_heads; }
  uint32_t kv_dim() const { return n_kv_heads * head_dim(); }
  uint32_t rotated_dim() const { return rope_dim ? rope_dim : head_dim(); }
  // The configuration a file of this shape describes (architecture llama, rope over the whole
  // head); what the model maker plans its tensors from.
  LlamaConfig config() const;
};

// "tiny", "1B" or "8B" (case-insensitive); throws r1pi::Error naming the known presets.
ModelShape preset_shape(const std::string& preset);

// The preset with the explicit fields of options applied. n_tokenizer_tokens (0: built-in byte
// vocabulary) is the tokenizer's size: a preset's vocabulary grows to fit it, an explicit --vocab
// must hold it. Throws r1pi::Error on a shape the runtime cannot load.
ModelShape resolve_shape(const MakeOptions& options, uint32_t n_tokenizer_tokens);

// Sizes positive, heads dividing dim and each other, even head size, and every matrix row a whole
// number of blocks of its type. Throws r1pi::Error("<context>: ...").
void check_shape(const ModelShape& shape, GgmlType matrix_type, GgmlType output_type, bool tied,
                 const std::string& context);

}  // namespace r1pi
