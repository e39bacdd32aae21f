#include "tools/model_shape.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "model/tensor_table.h"
#include "tools/model_maker.h"

namespace r1pi {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The smallest vocabulary the built-in byte tokenizer can fill: 256 bytes, BOS and EOS.
constexpr uint32_t kMinByteVocab = 258;

}  // namespace

LlamaConfig ModelShape::config() const {
  LlamaConfig c;
  c.arch = &llama_architecture();
  c.name = name;
  c.n_ctx_train = n_ctx;
  c.dim = dim;
  c.n_layers = n_layers;
  c.ffn_dim = ffn_dim;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = head_dim();
  c.rope_dim = rotated_dim();
  c.rms_eps = rms_eps;
  c.rope_base = rope_base;
  c.n_vocab = n_vocab;
  return c;
}

ModelShape preset_shape(const std::string& preset) {
  ModelShape s;
  const std::string p = lower(preset);
  if (p == "tiny") {
    s = {.name = "r1pi random tiny", .dim = 256, .n_layers = 4, .n_heads = 8, .n_kv_heads = 4,
         .ffn_dim = 768, .n_vocab = 512, .n_ctx = 2048, .rope_base = 10000.0f, .rms_eps = 1e-5f,
         // Llama 3.1's scaling rule with the original context shrunk to 256, so that the tiny
         // model's 32-wide heads get all three bands (kept, smoothed, divided) in 2048 positions.
         .rope_scaled = true, .rope_scaling = {8.0f, 1.0f, 4.0f, 256}};
  } else if (p == "1b") {
    // Llama 3.2 1B's shape (untied here unless --tied, to exercise output.weight).
    s = {.name = "r1pi random 1B", .dim = 2048, .n_layers = 16, .n_heads = 32, .n_kv_heads = 8,
         .ffn_dim = 8192, .n_vocab = 128256, .n_ctx = 8192, .rope_base = 500000.0f, .rms_eps = 1e-5f,
         .rope_scaled = true, .rope_scaling = {8.0f, 1.0f, 4.0f, 8192}};
  } else if (p == "8b") {
    // DeepSeek-R1-Distill-Llama-8B's shape. The real file says context_length 131072; 8192 is
    // written instead so that runtimes sizing their KV cache by it stay small on a random model
    // (--ctx 131072 gives the real value). The rope factors are the real model's either way.
    s = {.name = "r1pi random 8B", .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8,
         .ffn_dim = 14336, .n_vocab = 128256, .n_ctx = 8192, .rope_base = 500000.0f, .rms_eps = 1e-5f,
         .rope_scaled = true, .rope_scaling = {8.0f, 1.0f, 4.0f, 8192}};
  } else {
    throw Error("unknown preset '" + preset + "' (known: tiny, 1B, 8B)");
  }
  return s;
}

ModelShape resolve_shape(const MakeOptions& o, uint32_t n_tokenizer_tokens) {
  ModelShape s = preset_shape(o.preset);
  if (o.dim) s.dim = *o.dim;
  if (o.n_layers) s.n_layers = *o.n_layers;
  if (o.n_heads) s.n_heads = *o.n_heads;
  // Changing the head count without a KV head count keeps plain multi-head attention valid.
  if (o.n_kv_heads) s.n_kv_heads = *o.n_kv_heads;
  else if (o.n_heads && s.n_heads % s.n_kv_heads != 0) s.n_kv_heads = s.n_heads;
  if (o.ffn_dim) s.ffn_dim = *o.ffn_dim;
  if (o.n_ctx) s.n_ctx = *o.n_ctx;

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
  check_shape(s, o.matrix_type, o.output_type, o.tied_output, "model shape");
  return s;
}

void check_shape(const ModelShape& s, GgmlType matrix_type, GgmlType output_type, bool tied,
                 const std::string& context) {
  auto fail = [&](const std::string& what) { throw Error(context + ": " + what); };
  if (!s.dim || !s.n_layers || !s.n_heads || !s.n_kv_heads || !s.ffn_dim || !s.n_vocab || !s.n_ctx) {
    fail("dim, layers, heads, KV heads, FFN size, vocabulary and context must all be positive");
  }
  if (s.dim % s.n_heads) {
    fail("dim " + std::to_string(s.dim) + " is not divisible by " + std::to_string(s.n_heads) + " heads");
  }
  if (s.n_heads % s.n_kv_heads) {
    fail(std::to_string(s.n_heads) + " heads are not divisible by " + std::to_string(s.n_kv_heads) +
         " KV heads");
  }
  if (s.head_dim() % 2) fail("head size " + std::to_string(s.head_dim()) + " must be even for RoPE");

  // Every matrix's rows (dim long, ffn long for ffn_down) are quantised in whole blocks.
  auto check_rows = [&](GgmlType type, uint64_t n, const char* what) {
    const size_t block = ggml_block_elements(type);
    if (n % block) {
      fail(std::string(what) + " " + std::to_string(n) + " is not a multiple of " +
           std::to_string(block) + ", the " + std::string(ggml_type_name(type)) + " block size");
    }
  };
  check_rows(matrix_type, s.dim, "dim");
  check_rows(matrix_type, s.ffn_dim, "FFN size");
  if (!tied) check_rows(output_type, s.dim, "dim (for output.weight)");
}

}  // namespace r1pi
