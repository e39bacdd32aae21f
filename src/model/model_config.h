// The hyper-parameters of a model, read from GGUF metadata through its architecture's rows
// (model/architecture.h) and checked for sense. The model maker writes a file from one too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

class GgufFile;
struct Architecture;

struct ModelConfig {
  const Architecture* arch = nullptr;  // its keys, tensor table and parts (model/arch/)
  std::string name;            // general.name, for display
  // The keys' names are <arch>.<key> (llama.context_length); the rows: model/arch/registry.cpp.
  uint32_t n_ctx_train = 0;    // context_length
  uint32_t dim = 0;            // embedding_length
  uint32_t n_layers = 0;       // block_count
  uint32_t ffn_dim = 0;        // feed_forward_length
  uint32_t n_heads = 0;        // attention.head_count
  uint32_t n_kv_heads = 0;     // attention.head_count_kv (defaults to n_heads)
  uint32_t head_dim = 0;       // attention.key_length (defaults to dim / n_heads)
  uint32_t value_dim = 0;      // attention.value_length (the same default): r1pi needs head_dim
  uint32_t rope_dim = 0;       // rope.dimension_count (defaults to head_dim)
  float rms_eps = 1e-5f;       // attention.layer_norm_rms_epsilon
  float rope_base = 10000.0f;  // rope.freq_base
  uint32_t n_vocab = 0;        // vocab_size, else the token list / embedding rows
  bool tied_output = false;    // no output.weight: logits use token_embd.weight
  // The FFN splits across ranks on multiples of this many hidden units: the least common multiple
  // of the block sizes of every tensor whose columns are split by FFN unit (ffn_down, all layers).
  uint32_t ffn_block = 1;
  // Mixture of experts (qwen3moe; 0 in dense models): each token's FFN is the weighted sum of
  // n_experts_used of n_experts gated FFNs of expert_ffn_dim units, chosen by a router.
  uint32_t n_experts = 0;       // expert_count
  uint32_t n_experts_used = 0;  // expert_used_count
  uint32_t expert_ffn_dim = 0;  // expert_feed_forward_length (defaults to ffn_dim / n_experts_used)
  // Each expert's units split across ranks on multiples of this (ffn_down_exps' block sizes).
  uint32_t expert_block = 1;
  // llama3 RoPE scaling: one divisor per rotated pair (theta_i = pos * base^(-2i/rope_dim) / f_i),
  // from the metadata keys when the file has them, else the rope_freqs.weight tensor; empty = none.
  std::vector<float> rope_freq_factors;
  // YaRN RoPE scaling (rope.scaling.type "yarn": gpt-oss, long-context Qwen): the context factor and
  // the original context (rope.scaling.factor, .original_context_length); 0: none. The ramp's
  // bounds use ggml's default betas (32, 1), which the files leave out: layers/rope_table.h.
  float yarn_factor = 0.0f;
  uint32_t yarn_original_context = 0;
  // Sliding-window attention (gpt-oss): in layers whose index is a multiple of swa_period a query
  // sees itself and the sliding_window - 1 positions before it; the others see every position.
  // 0: no window (attention.sliding_window).
  uint32_t sliding_window = 0;
  uint32_t swa_period = 0;   // attention.sliding_window_pattern as a period

  uint32_t q_dim() const { return n_heads * head_dim; }
  // Positions a query of layer l sees back to, itself included (0: every position).
  uint32_t window_of(uint32_t layer) const {
    return sliding_window && swa_period && layer % swa_period == 0 ? sliding_window : 0;
  }
  std::vector<int> layer_windows() const {  // window_of each layer, for the KV cache
    std::vector<int> windows;
    for (uint32_t l = 0; l < n_layers; ++l) windows.push_back(int(window_of(l)));
    return windows;
  }
  uint32_t kv_dim() const { return n_kv_heads * head_dim; }

  // Reads and validates (a known architecture, positive sizes, heads dividing each other, every
  // tensor of the architecture's table present with its shape and an allowed type); throws
  // r1pi::Error naming the file and the problem.
  static ModelConfig from_gguf(const GgufFile& file);
  // The sizes alone checked as from_gguf checks them (the model maker's shapes); throws
  // r1pi::Error("<context>: ...").
  void check_sizes(const std::string& context) const;
};

// llama3 frequency factors (Llama 3.1's rope_scaling, as llama.cpp's converter computes the
// rope_freqs tensor): factor, low/high frequency factors and the original context length.
std::vector<float> llama3_rope_freq_factors(uint32_t rope_dim, float rope_base, float factor,
                                            float low_freq_factor, float high_freq_factor,
                                            uint32_t original_context);

}  // namespace r1pi
