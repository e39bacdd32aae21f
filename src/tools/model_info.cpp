// print_model_info: what a GGUF file holds, and what r1pi makes of it.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "ggml/quant_blocks.h"
#include "layers/kv_cache.h"
#include "model/architecture.h"
#include "model/model_config.h"
#include "runtime/run_options.h"
#include "tools/model_maker.h"
#include "tokenizer/printable_text.h"

namespace r1pi {

namespace {

// Abbreviations when all_metadata is off: the first few array items, the start of long strings
// (a chat template is kilobytes).
constexpr size_t kArrayItems = 8;
constexpr size_t kStringChars = 120;

std::string human_bytes(uint64_t n) {
  char buf[32];
  if (n >= 1000000000) std::snprintf(buf, sizeof buf, "%.2f GB", n / 1e9);
  else if (n >= 1000000) std::snprintf(buf, sizeof buf, "%.2f MB", n / 1e6);
  else if (n >= 1000) std::snprintf(buf, sizeof buf, "%.1f kB", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

std::string type_name(const GgufValue& v) {
  std::string t(gguf_value_type_name(v.type));
  if (v.type == GgufValueType::ARRAY) t += "[" + std::string(gguf_value_type_name(v.array_type)) + "]";
  return t;
}

std::string value_text(const GgufValue& v, bool all) {
  if (all) return v.to_display_string(SIZE_MAX);
  std::string s = v.to_display_string(kArrayItems);
  if (v.type == GgufValueType::STRING && s.size() > kStringChars) {
    s = s.substr(0, kStringChars) + "... (" + std::to_string(v.s.size()) + " bytes)";
  }
  return s;
}

std::string shape_text(const std::vector<uint64_t>& ne) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? " x " : "") + std::to_string(ne[i]);
  return s;
}

void print_config(const GgufFile& file) {
  try {
    const ModelConfig c = ModelConfig::from_gguf(file);
    std::printf("\n%s config (as r1pi loads it):\n", std::string(c.arch->name).c_str());
    std::printf("  dim %u, %u layers, %u heads / %u KV heads (head size %u), FFN %u\n", c.dim,
                c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.ffn_dim);
    std::printf("  vocab %u, trained context %u, rms eps %g\n", c.n_vocab, c.n_ctx_train, c.rms_eps);
    const std::string scaling = c.yarn_factor > 0 ? "YaRN, factor " + std::to_string(int(c.yarn_factor)) + " over " +
                                                        std::to_string(c.yarn_original_context)
                                : c.rope_freq_factors.empty() ? "no frequency scaling"
                                                              : "llama3 frequency factors";
    std::printf("  rope base %g over %u dims, %s\n", c.rope_base, c.rope_dim, scaling.c_str());
    if (c.sliding_window)
      std::printf("  sliding window of %u positions in the layers whose index is a multiple of %u\n", c.sliding_window,
                  c.swa_period);
    if (c.n_experts)
      std::printf("  %u experts of %u units, %u per token\n", c.n_experts, c.expert_ffn_dim, c.n_experts_used);
    std::printf("  output: %s\n", c.tied_output ? "tied to token_embd.weight" : "separate output.weight");
    // r1pi's default context (min(trained, 4096)) and prefill batch (the window layers' rings); with
    // several ranks each holds its KV heads' share.
    const int n_ctx = int(std::min<uint32_t>(c.n_ctx_train, 4096)), batch = RunOptions{}.batch_size;
    const std::string rings =
        c.sliding_window ? ", the window layers " + std::to_string(std::min(n_ctx, int(c.sliding_window) + batch - 1)) +
                               " positions at -b " + std::to_string(batch)
                         : "";
    std::printf("  KV cache at context %d%s (--kv-type):", n_ctx, rings.c_str());
    const char* sep = " ";
    for (const KvCacheType& kv : kKvCacheTypes) {
      const GgmlType t = kv.type;
      if (t == GgmlType::Q8_0 && c.head_dim % QK8_0 != 0) continue;
      std::printf("%s%s %s", std::exchange(sep, ", "), kv.name,
                  human_bytes(KvCache::bytes_for(int(c.n_layers), n_ctx, int(c.n_kv_heads), int(c.head_dim), t, 1,
                                                 c.layer_windows(), batch)).c_str());
    }
    std::printf("\n");
  } catch (const Error& e) {
    std::printf("\nnot loadable by r1pi: %s\n", printable_text(e.what(), true).c_str());
  }
}

}  // namespace

void print_model_info(const std::string& path, bool all_metadata) {
  const GgufFile file = GgufFile::open(path);
  std::printf("%s: GGUF v%u, %s (%llu bytes), alignment %llu, %zu metadata keys, %zu tensors\n",
              path.c_str(), file.version(), human_bytes(file.file_size()).c_str(),
              static_cast<unsigned long long>(file.file_size()),
              static_cast<unsigned long long>(file.alignment()), file.metadata().size(),
              file.tensors().size());

  std::printf("\nmetadata:\n");
  size_t key_width = 0;
  for (const auto& [key, value] : file.metadata()) key_width = std::max(key_width, key.size());
  for (const auto& [key, value] : file.metadata()) {
    std::printf("  %-*s %-14s %s\n", static_cast<int>(key_width), printable_text(key).c_str(),
                type_name(value).c_str(), printable_text(value_text(value, all_metadata)).c_str());
  }

  std::printf("\ntensors:\n");
  size_t name_width = 4;
  for (const GgufTensorInfo& t : file.tensors()) name_width = std::max(name_width, t.name.size());
  std::printf("  %-*s %-5s %-20s %s\n", static_cast<int>(name_width), "name", "type", "shape", "bytes");
  struct Total { size_t count = 0; uint64_t elements = 0, bytes = 0; };
  std::map<std::string, Total> totals;
  for (const GgufTensorInfo& t : file.tensors()) {
    const std::string type(ggml_type_name(t.type));
    std::printf("  %-*s %-5s %-20s %llu\n", static_cast<int>(name_width), printable_text(t.name).c_str(), type.c_str(),
                shape_text(t.ne).c_str(), static_cast<unsigned long long>(t.n_bytes));
    Total& total = totals[type];
    ++total.count;
    total.elements += t.n_elements;
    total.bytes += t.n_bytes;
  }

  std::printf("\ntotals by type:\n");
  Total all;
  for (const auto& [type, t] : totals) {
    std::printf("  %-5s %5zu tensors %15llu elements %12s\n", type.c_str(), t.count,
                static_cast<unsigned long long>(t.elements), human_bytes(t.bytes).c_str());
    all.count += t.count;
    all.elements += t.elements;
    all.bytes += t.bytes;
  }
  std::printf("  %-5s %5zu tensors %15llu elements %12s\n", "all", all.count,
              static_cast<unsigned long long>(all.elements), human_bytes(all.bytes).c_str());

  print_config(file);
}

}  // namespace r1pi
