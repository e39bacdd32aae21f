#include "model/model_config.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>
#include <optional>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/architecture.h"
#include "model/tensor_table.h"

namespace r1pi {

namespace {

std::string shape_string(const std::vector<uint64_t>& ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

// Norms and rope factors are read as plain floats by every backend; matrices go through the
// dot-product kernels, which exist for the types the trait table marks.
bool type_allowed(const TensorSpec& spec, GgmlType type) {
  return spec.is_matrix() ? ggml_traits(type).holds_matrix : type == GgmlType::F32;
}

const GgufTensorInfo& check_tensor(const GgufFile& file, const GgufTensorInfo& t,
                                   const TensorSpec& spec, const std::vector<uint64_t>& expected) {
  if (t.ne != expected) {
    throw Error(file.path() + ": tensor " + t.name + " has shape " + shape_string(t.ne) +
                ", expected " + shape_string(expected));
  }
  if (!type_allowed(spec, t.type)) {
    throw Error(file.path() + ": tensor " + t.name + " has type " +
                std::string(ggml_type_name(t.type)) + ", which r1pi does not support there" +
                (spec.is_matrix() ? "" : " (expected F32)"));
  }
  // Quantised matrices are multiplied block by block against Q8_0 activations, so a row must
  // hold whole blocks (dim and ffn multiples of 32 for Q4_0/Q8_0, of 256 for Q6_K).
  const size_t block = ggml_block_elements(t.type);
  if (t.ne[0] % block != 0) {
    throw Error(file.path() + ": tensor " + t.name + " rows of " + std::to_string(t.ne[0]) +
                " elements are not a whole number of " + std::string(ggml_type_name(t.type)) +
                " blocks of " + std::to_string(block));
  }
  return t;
}

// One row of the architecture's hyper-parameters into c: the key's value, else its fallback.
// Every size is positive (0 names its key); the floats are checked by the caller, which knows why.
void read_param(const GgufFile& file, const Architecture& arch, const HyperParam& p, ModelConfig& c) {
  const std::string key = arch.key(p.key);
  const bool present = file.has(key);
  if (!present && !p.fallback) file.get_u32(key);  // throws "missing key" naming the file and key
  if (auto* u = std::get_if<uint32_t ModelConfig::*>(&p.field)) {
    c.**u = present ? file.get_u32(key) : uint32_t(p.fallback(c));
    if (c.**u == 0) throw Error(file.path() + ": " + key + " is 0");
  } else {
    auto* f = std::get_if<float ModelConfig::*>(&p.field);
    c.**f = present ? file.get_f32(key) : float(p.fallback(c));
  }
}

uint32_t read_vocab_size(const GgufFile& file, const Architecture& arch) {
  if (auto v = file.try_u64(arch.key("vocab_size"))) {
    // Token ids are int32: a larger count would be cut to its low bits (2^32 + 512 read as 512).
    if (*v > uint64_t(INT32_MAX))
      throw Error(file.path() + ": " + arch.key("vocab_size") + " " + std::to_string(*v) +
                  " is more tokens than an int32 id can name");
    return static_cast<uint32_t>(*v);
  }
  if (const GgufValue* tokens = file.find("tokenizer.ggml.tokens")) {
    return static_cast<uint32_t>(tokens->array.size());
  }
  if (const GgufTensorInfo* embd = file.find_tensor("token_embd.weight"); embd && embd->ne.size() == 2) {
    return static_cast<uint32_t>(embd->ne[1]);
  }
  throw Error(file.path() + ": cannot tell the vocabulary size (no " + arch.key("vocab_size") +
              ", tokenizer.ggml.tokens or token_embd.weight)");
}

// llama3 scaling from metadata keys, when the file describes it that way (HF-style converters).
// The defaults are Llama 3.1's, which is what converters assume for a missing field too.
std::vector<float> metadata_rope_factors(const GgufFile& file, const ModelConfig& c) {
  auto key = [&](const char* name) { return c.arch->key(std::string("rope.scaling.") + name); };
  const auto type = file.try_string(key("type"));
  if (type && *type == "yarn") return {};  // read_yarn's
  if (type && *type != "llama3") {
    // "none", or a linear scaling by 1 that some converters write, leave RoPE alone; any other
    // scaling would change it in a way r1pi does not implement, so refuse rather than run wrongly.
    const bool no_op = *type == "none" ||
        (*type == "linear" && file.try_f32(key("factor")).value_or(1.0f) == 1.0f);
    if (!no_op) {
      throw Error(file.path() + ": rope scaling type '" + *type + "' is not supported (r1pi "
                  "implements llama3 and yarn scaling)");
    }
    return {};
  }
  const bool has_all = file.has(key("factor")) &&
                       file.has(key("low_freq_factor")) &&
                       file.has(key("high_freq_factor")) &&
                       file.has(key("original_context_length"));
  if (!type && !has_all) return {};

  const float factor = file.try_f32(key("factor")).value_or(8.0f);
  const float low = file.try_f32(key("low_freq_factor")).value_or(1.0f);
  const float high = file.try_f32(key("high_freq_factor")).value_or(4.0f);
  const uint64_t original = file.try_u64(key("original_context_length")).value_or(8192);
  const bool finite = std::isfinite(factor) && std::isfinite(low) && std::isfinite(high);
  if (!finite || !(factor > 0) || !(low > 0) || !(high > low) || original == 0) {
    throw Error(file.path() + ": bad llama3 rope scaling (factor " + std::to_string(factor) +
                ", low_freq_factor " + std::to_string(low) + ", high_freq_factor " +
                std::to_string(high) + ", original_context_length " + std::to_string(original) +
                "): need finite factors, factor > 0, high > low > 0, context > 0");
  }
  return llama3_rope_freq_factors(c.rope_dim, c.rope_base, factor, low, high,
                                  static_cast<uint32_t>(original));
}

// YaRN scaling (rope.scaling.type "yarn"): its factor and original context, both required.
void read_yarn(const GgufFile& file, ModelConfig& c) {
  auto key = [&](const char* name) { return c.arch->key(std::string("rope.scaling.") + name); };
  if (file.try_string(key("type")).value_or("") != "yarn") return;
  const std::optional<float> factor = file.try_f32(key("factor"));
  const std::optional<uint64_t> original = file.try_u64(key("original_context_length"));
  if (!factor || !original)
    throw Error(file.path() + ": yarn rope scaling needs " + key("factor") + " and " + key("original_context_length"));
  if (!(*factor >= 1) || !std::isfinite(*factor) || *original == 0 || *original > UINT32_MAX)
    throw Error(file.path() + ": bad yarn rope scaling (factor " + std::to_string(*factor) + ", original context " +
                std::to_string(*original) + "): need a finite factor of at least 1 and a positive context");
  c.yarn_factor = *factor;
  c.yarn_original_context = uint32_t(*original);
}

std::vector<float> tensor_rope_factors(const GgufFile& file, const ModelConfig& c) {
  // check_tensors has checked its shape and type.
  const GgufTensorInfo* t = file.find_tensor("rope_freqs.weight");
  if (!t) return {};
  std::vector<float> factors(c.rope_dim / 2);
  std::memcpy(factors.data(), file.tensor_data(*t), factors.size() * sizeof(float));
  for (float f : factors) {
    if (!(f > 0) || !std::isfinite(f)) {
      throw Error(file.path() + ": rope_freqs.weight holds " + std::to_string(f) +
                  " (factors must be positive and finite)");
    }
  }
  return factors;
}

// 1 + the highest N of the file's "blk.N." tensors (0 when it has none).
uint64_t layers_in_tensors(const GgufFile& file) {
  uint64_t layers = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (t.name.rfind("blk.", 0) != 0) continue;
    const char* first = t.name.c_str() + 4;
    const char* last = t.name.c_str() + t.name.size();
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec == std::errc() && end != first && *end == '.') layers = std::max(layers, n + 1);
  }
  return layers;
}

// Every tensor of the architecture's table, in every layer; also what follows from their types
// (tied output, the FFN split block).
void check_tensors(const GgufFile& file, ModelConfig& c) {
  for (const TensorInstance& t : model_tensors(c)) {
    const TensorSpec& spec = *t.spec;
    const GgufTensorInfo* info = file.find_tensor(t.name);
    if (!info) {
      if (spec.presence == Presence::Required) throw Error(file.path() + ": missing tensor " + t.name);
      if (spec.presence == Presence::ElseTokenEmbd) c.tied_output = true;
      continue;
    }
    check_tensor(file, *info, spec, spec.shape(c));
    if (spec.split.axis == Axis::Cols && spec.split.unit == Unit::FfnUnits)
      c.ffn_block = std::lcm(c.ffn_block, uint32_t(ggml_block_elements(info->type)));
    if (spec.split.axis == Axis::Cols && spec.split.unit == Unit::ExpertUnits)
      c.expert_block = std::lcm(c.expert_block, uint32_t(ggml_block_elements(info->type)));
  }
}

}  // namespace

void ModelConfig::check_sizes(const std::string& context) const {
  auto fail = [&](const std::string& what) { throw Error(context + ": " + what); };
  if (!dim || !n_layers || !n_heads || !n_kv_heads || !head_dim || !ffn_dim || !n_vocab || !n_ctx_train)
    fail("dim, layers, heads, KV heads, head size, FFN size, vocabulary and context must all be positive");
  if (value_dim != head_dim)
    fail("value head size " + std::to_string(value_dim) + " (attention.value_length) differs from the key " +
         "head size " + std::to_string(head_dim) + " (attention.key_length)");
  if (n_heads % n_kv_heads != 0)
    fail(std::to_string(n_heads) + " heads are not divisible by " + std::to_string(n_kv_heads) + " KV heads");
  if (rope_dim % 2 != 0 || rope_dim > head_dim)
    fail("rope dimension " + std::to_string(rope_dim) + " must be even and at most the head size " +
         std::to_string(head_dim));
  // Rotating halves over part of a head pairs x[i] with x[i + rope_dim/2]: no model r1pi runs does it.
  if (arch->rope == RopeLayout::NeoxHalves && rope_dim != head_dim)
    fail("rope dimension " + std::to_string(rope_dim) + " must equal the head size " + std::to_string(head_dim) +
         " for " + std::string(arch->name) + "'s RoPE over the halves of each head");
  if (arch->experts) {
    if (!n_experts || !n_experts_used || !expert_ffn_dim)
      fail("experts, experts used per token and the expert FFN size must all be positive");
    if (n_experts_used > n_experts)
      fail(arch->key("expert_used_count") + " " + std::to_string(n_experts_used) + " is more than the " +
           std::to_string(n_experts) + " experts (" + arch->key("expert_count") + ")");
  }
  if (sliding_window && !swa_period) fail(arch->key("attention.sliding_window_pattern") + " must be positive");
  if (!(rms_eps > 0) || !std::isfinite(rms_eps)) fail(arch->key("attention.layer_norm_rms_epsilon") + " must be positive");
  if (!(rope_base > 1) || !std::isfinite(rope_base)) fail(arch->key("rope.freq_base") + " must be greater than 1");
}

ModelConfig ModelConfig::from_gguf(const GgufFile& file) {
  const std::string& path = file.path();
  const std::string name = file.get_string("general.architecture");
  const Architecture* arch = find_architecture(name);
  if (!arch) throw Error(path + ": unknown architecture '" + name + "' (r1pi runs " + architecture_names() + ")");
  // Mixtral-style files say "llama" too; their expert tensors would only show up as missing ffn_*.
  if (const uint64_t experts = file.try_u64(arch->key("expert_count")).value_or(0); experts > 0 && !arch->experts) {
    throw Error(path + ": a mixture-of-experts model (" + arch->key("expert_count") + " = " +
                std::to_string(experts) + "); r1pi runs dense " + name + " models");
  }

  ModelConfig c;
  c.arch = arch;
  c.name = file.try_string("general.name").value_or("");
  for (const HyperParam& p : arch->params) read_param(file, *arch, p, c);
  // Every layer has tensors of its own: a block count beyond the file's tensors is refused before a
  // tensor list of that many layers is built (2^32 - 1 layers took minutes and gigabytes).
  if (c.n_layers > file.tensors().size()) {
    throw Error(path + ": " + arch->key("block_count") + " is " + std::to_string(c.n_layers) +
                ", but the file has only " + std::to_string(file.tensors().size()) + " tensors");
  }
  // llama.cpp refuses a file with tensors it does not use: a block count below the file's layers
  // would run the first layers only, and say nothing. (One above them fails on a missing tensor.)
  if (const uint64_t layers = layers_in_tensors(file); layers > c.n_layers) {
    throw Error(path + ": " + arch->key("block_count") + " is " + std::to_string(c.n_layers) +
                ", but the file holds tensors of " + std::to_string(layers) + " layers (blk.0 to blk." +
                std::to_string(layers - 1) + "): refused rather than run on the first " +
                std::to_string(c.n_layers) + " only");
  }
  // Without attention.key_length the head size is dim / heads, which must then be whole.
  if (!file.has(arch->key("attention.key_length")) && c.dim % c.n_heads != 0) {
    throw Error(path + ": embedding length " + std::to_string(c.dim) + " is not divisible by " +
                std::to_string(c.n_heads) + " heads");
  }
  c.n_vocab = read_vocab_size(file, *arch);
  if (c.n_vocab == 0) throw Error(path + ": vocabulary size is 0");
  c.check_sizes(path);

  check_tensors(file, c);
  read_yarn(file, c);
  c.rope_freq_factors = metadata_rope_factors(file, c);
  if (c.rope_freq_factors.empty()) c.rope_freq_factors = tensor_rope_factors(file, c);
  return c;
}

std::vector<float> llama3_rope_freq_factors(uint32_t rope_dim, float rope_base, float factor,
                                            float low_freq_factor, float high_freq_factor,
                                            uint32_t original_context) {
  // In double, then rounded once: the converter's float32 torch arithmetic agrees to the last
  // bit or so, and a double reference does not depend on the platform's powf.
  const double orig = original_context;
  const double low_wavelen = orig / low_freq_factor;
  const double high_wavelen = orig / high_freq_factor;
  std::vector<float> factors(rope_dim / 2);
  for (uint32_t i = 0; i < rope_dim / 2; ++i) {
    const double freq = std::pow(static_cast<double>(rope_base), -2.0 * i / rope_dim);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double f;
    if (wavelen < high_wavelen) {
      f = 1.0;
    } else if (wavelen > low_wavelen) {
      f = factor;
    } else {
      const double smooth = (orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      f = 1.0 / ((1.0 - smooth) / factor + smooth);
    }
    factors[i] = static_cast<float>(f);
  }
  return factors;
}

}  // namespace r1pi
