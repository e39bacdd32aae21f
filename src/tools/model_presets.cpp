#include "tools/model_presets.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "common/ascii_lower.h"
#include "common/error.h"
#include "model/architecture.h"
#include "tools/model_maker.h"
#include "tools/quant_mix.h"

namespace r1pi {

namespace {

// The smallest vocabulary the built-in byte tokenizer can fill: 256 bytes, BOS and EOS.
constexpr uint32_t kMinByteVocab = 258;

// llama3 RoPE frequency scaling (Llama 3.1's rope_scaling), written as the rope_freqs.weight tensor.
struct Llama3RopeScaling {
  float factor, low_freq_factor, high_freq_factor;
  uint32_t original_context;
};

// A preset: the real model's sizes (head_dim 0: dim / heads, so that --dim and --heads keep it
// consistent; Qwen3 fixes it; rope_dim 0: the whole head), whether its output is tied, and its
// RoPE scaling, if any.
struct Preset {
  std::string_view arch, name;
  ModelConfig config;
  std::optional<Llama3RopeScaling> rope_scaling;
};

ModelConfig sizes(std::string name, uint32_t dim, uint32_t n_layers, uint32_t n_heads, uint32_t n_kv_heads,
                  uint32_t ffn_dim, uint32_t n_vocab, uint32_t n_ctx, float rope_base) {
  ModelConfig c;
  c.name = std::move(name);
  c.dim = dim;
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.ffn_dim = ffn_dim;
  c.n_vocab = n_vocab;
  c.n_ctx_train = n_ctx;
  c.rope_base = rope_base;
  c.rms_eps = 1e-5f;
  return c;
}

// Qwen's: RMS epsilon 1e-6, a fixed head size where given (qwen3), tied or not as the real file.
ModelConfig qwen(ModelConfig c, uint32_t head_dim, bool tied) {
  c.rms_eps = 1e-6f;
  c.head_dim = head_dim;
  c.tied_output = tied;
  return c;
}

// A mixture of experts in every layer: n of them, `used` per token, of ffn units each.
ModelConfig experts(ModelConfig c, uint32_t n, uint32_t used, uint32_t ffn) {
  c.n_experts = n;
  c.n_experts_used = used;
  c.expert_ffn_dim = ffn;
  return c;
}

// gpt-oss: head size 64 whatever dim / heads, a window in every other layer, YaRN RoPE (factor
// 32 over an original context of 4096) and rope base 150000, as the published files.
ModelConfig gpt_oss(ModelConfig c, uint32_t window) {
  c.head_dim = 64;
  c.sliding_window = window;
  c.swa_period = 2;
  c.yarn_factor = 32.0f;
  c.yarn_original_context = 4096;
  return c;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      // Llama 3.1's scaling rule with the original context shrunk to 256, so that the tiny model's
      // 32-wide heads get all three bands (kept, smoothed, divided) in 2048 positions.
      {"llama", "tiny", sizes("r1pi random tiny", 256, 4, 8, 4, 768, 512, 2048, 10000.0f),
       Llama3RopeScaling{8.0f, 1.0f, 4.0f, 256}},
      // Llama 3.2 1B's shape (untied here unless --tied, to exercise output.weight).
      {"llama", "1B", sizes("r1pi random 1B", 2048, 16, 32, 8, 8192, 128256, 8192, 500000.0f),
       Llama3RopeScaling{8.0f, 1.0f, 4.0f, 8192}},
      // DeepSeek-R1-Distill-Llama-8B's shape. The real file says context_length 131072; 8192 is
      // written instead so that runtimes sizing their KV cache by it stay small on a random model
      // (--ctx 131072 gives the real value). The rope factors are the real model's either way.
      {"llama", "8B", sizes("r1pi random 8B", 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0f),
       Llama3RopeScaling{8.0f, 1.0f, 4.0f, 8192}},
      // DeepSeek-R1-Distill-Llama-70B's shape (Llama 3.3 70B's: Llama 3.1 70B's sizes and rope
      // scaling); the context written is 8192, as the 8B's. About 40 GB as Q4_0: four 16 GB boards.
      {"llama", "70B", sizes("r1pi random 70B", 8192, 80, 64, 8, 28672, 128256, 8192, 500000.0f),
       Llama3RopeScaling{8.0f, 1.0f, 4.0f, 8192}},
      // qwen2 (biases on q/k/v): the tiny shape, DeepSeek-R1-Distill-Qwen-1.5B and -7B.
      {"qwen2", "tiny", qwen(sizes("r1pi random qwen2 tiny", 256, 4, 8, 4, 768, 512, 2048, 1e6f), 0, false), {}},
      // The R1 distills keep their Qwen2.5-Math base's rope base (10000), not Qwen2.5's 1e6.
      {"qwen2", "1.5B", qwen(sizes("r1pi random R1-Distill-Qwen-1.5B", 1536, 28, 12, 2, 8960, 151936, 131072, 10000.0f), 0, false), {}},
      {"qwen2", "7B", qwen(sizes("r1pi random R1-Distill-Qwen-7B", 3584, 28, 28, 4, 18944, 152064, 131072, 10000.0f), 0, false), {}},
      // qwen3 (per-head q/k norm, head size 128 whatever dim / heads): tiny (head size 64, twice
      // dim / heads, as Qwen3's), Qwen3-0.6B (tied) and Qwen3-8B (also DeepSeek-R1-0528-Qwen3-8B).
      {"qwen3", "tiny", qwen(sizes("r1pi random qwen3 tiny", 256, 4, 8, 4, 768, 512, 2048, 1e6f), 64, false), {}},
      {"qwen3", "0.6B", qwen(sizes("r1pi random Qwen3-0.6B", 1024, 28, 16, 8, 3072, 151936, 40960, 1e6f), 128, true), {}},
      {"qwen3", "8B", qwen(sizes("r1pi random Qwen3-8B", 4096, 36, 32, 8, 12288, 151936, 40960, 1e6f), 128, false), {}},
      // qwen3moe (qwen3's attention, a mixture of experts in every layer; feed_forward_length is
      // the dense width the files carry, unused): tiny, 16 experts of 96 units (3 Q4_0 blocks,
      // fewer than 4 ranks, as the 30B's 3 K-quant super-blocks), 4 per token; Qwen3-30B-A3B, 128
      // experts of 768 units, 8 per token.
      {"qwen3moe", "tiny", experts(qwen(sizes("r1pi random qwen3moe tiny", 256, 4, 8, 4, 768, 512, 2048, 1e6f), 64, false), 16, 4, 96), {}},
      {"qwen3moe", "30B-A3B", experts(qwen(sizes("r1pi random Qwen3-30B-A3B", 2048, 48, 32, 4, 6144, 151936, 40960, 1e6f), 128, false), 128, 8, 768), {}},
      // gpt-oss: tiny (heads of 64 at dim 256, as the real 64 x 64 at 2880; a window of 8, so that
      // short prompts cross it; 16 experts of 96 units, 4 per token), gpt-oss-20b (32 experts of
      // 2880, 4 per token) and gpt-oss-120b (128 experts), windows of 128.
      {"gpt-oss", "tiny", experts(gpt_oss(sizes("r1pi random gpt-oss tiny", 256, 4, 8, 2, 768, 512, 2048, 150000.0f), 8), 16, 4, 96), {}},
      {"gpt-oss", "20B", experts(gpt_oss(sizes("r1pi random gpt-oss-20b", 2880, 24, 64, 8, 2880, 201088, 131072, 150000.0f), 128), 32, 4, 2880), {}},
      {"gpt-oss", "120B", experts(gpt_oss(sizes("r1pi random gpt-oss-120b", 2880, 36, 64, 8, 2880, 201088, 131072, 150000.0f), 128), 128, 4, 2880), {}},
  };
  return all;
}

const Preset& find_preset(const std::string& arch, const std::string& name) {
  std::string known;
  for (const Preset& p : presets()) {
    if (p.arch != arch) continue;
    if (ascii_lower(p.name) == ascii_lower(name)) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  throw Error("unknown preset '" + name + "' for " + arch + " (known: " + known + ")");
}

}  // namespace

std::string preset_names() {
  std::string all;
  std::string_view arch;
  for (const Preset& p : presets()) {
    if (p.arch != arch) all += (all.empty() ? "" : "; ") + std::string(p.arch) + ":";
    all += (p.arch != arch ? " " : ", ") + std::string(p.name);
    arch = p.arch;
  }
  return all;
}

ModelConfig resolve_shape(const MakeOptions& o, uint32_t n_tokenizer_tokens) {
  const Architecture* arch = find_architecture(o.arch);
  if (!arch) throw Error("unknown architecture '" + o.arch + "' (r1pi runs " + architecture_names() + ")");
  const Preset& preset = find_preset(o.arch, o.preset);
  ModelConfig s = preset.config;
  s.arch = arch;
  if (o.dim) s.dim = *o.dim;
  if (o.n_layers) s.n_layers = *o.n_layers;
  if (o.n_heads) s.n_heads = *o.n_heads;
  // Changing the head count without a KV head count keeps plain multi-head attention valid.
  if (o.n_kv_heads) s.n_kv_heads = *o.n_kv_heads;
  else if (o.n_heads && s.n_heads % s.n_kv_heads != 0) s.n_kv_heads = s.n_heads;
  if (o.ffn_dim) s.ffn_dim = *o.ffn_dim;
  if (o.n_ctx) s.n_ctx_train = *o.n_ctx;

  if (o.n_vocab) {
    s.n_vocab = *o.n_vocab;
    if (n_tokenizer_tokens > s.n_vocab) {
      throw Error("--vocab " + std::to_string(s.n_vocab) + " is smaller than the " +
                  std::to_string(n_tokenizer_tokens) + " tokens of " + o.tokenizer_json);
    }
  } else {
    s.n_vocab = std::max(s.n_vocab, n_tokenizer_tokens);
  }
  if (n_tokenizer_tokens == 0 && s.n_vocab < kMinByteVocab) {
    throw Error("the built-in byte vocabulary needs a vocabulary of at least " +
                std::to_string(kMinByteVocab) + " (got " + std::to_string(s.n_vocab) + ")");
  }
  if (s.head_dim == 0 && s.n_heads > 0) {
    if (s.dim % s.n_heads != 0)
      throw Error("model shape: dim " + std::to_string(s.dim) + " is not divisible by " +
                  std::to_string(s.n_heads) + " heads");
    s.head_dim = s.dim / s.n_heads;
  }
  if (s.rope_dim == 0) s.rope_dim = s.head_dim;
  s.value_dim = s.head_dim;
  s.tied_output = s.tied_output || o.tied_output;
  check_shape(s, o.matrix_type, o.output_type, s.tied_output, "model shape");
  if (const auto& r = preset.rope_scaling)
    s.rope_freq_factors = llama3_rope_freq_factors(s.rope_dim, s.rope_base, r->factor, r->low_freq_factor,
                                                   r->high_freq_factor, r->original_context);
  return s;
}

void check_shape(const ModelConfig& s, GgmlType matrix_type, GgmlType output_type, bool tied,
                 const std::string& context) {
  s.check_sizes(context);
  // Every matrix's rows (dim long, ffn long for ffn_down, the query heads for attn_output) are
  // quantised in whole blocks, of the type or of llama-quantize's fallback for it (quant_mix.h).
  auto check_rows = [&](GgmlType type, uint64_t n, const char* what, bool output = false) {
    const size_t block = ggml_block_elements(type);
    if (!row_fallback(type, n, output)) {
      throw Error(context + ": " + what + " " + std::to_string(n) + " is not a multiple of " +
                  std::to_string(block) + ", the " + std::string(ggml_type_name(type)) + " block size");
    }
  };
  check_rows(matrix_type, s.dim, "dim");
  if (s.n_experts) check_rows(matrix_type, s.expert_ffn_dim, "expert FFN size");
  else check_rows(matrix_type, s.ffn_dim, "FFN size");
  check_rows(matrix_type, s.q_dim(), "query size (heads x head size)");
  if (!tied) check_rows(output_type, s.dim, "dim (for output.weight)", true);
}

}  // namespace r1pi
