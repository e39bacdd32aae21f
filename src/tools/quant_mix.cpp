#include "tools/quant_mix.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace r1pi {
namespace {

constexpr std::array kMixes = {
    QuantMix{"q4_k_m", GgmlType::Q4_K, GgmlType::Q6_K, 15},
    QuantMix{"q5_k_m", GgmlType::Q5_K, GgmlType::Q6_K, 17},
};

// llama-quant.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool use_more_bits(uint32_t i, uint32_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

const QuantMix* quant_mix_named(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  for (const QuantMix& m : kMixes)
    if (m.name == lower) return &m;
  return nullptr;
}

std::vector<std::string> quant_mix_names() {
  std::vector<std::string> names;
  for (const QuantMix& m : kMixes) names.emplace_back(m.name);
  return names;
}

GgmlType mix_tensor_type(const QuantMix& mix, std::string_view name, uint32_t layer, uint32_t n_layers,
                         bool output) {
  if (output) return mix.more_bits;
  const bool sensitive = ends_with(name, ".attn_v.weight") || ends_with(name, ".ffn_down.weight");
  return sensitive && use_more_bits(layer, n_layers) ? mix.more_bits : mix.base;
}

std::optional<GgmlType> row_fallback(GgmlType type, uint64_t ne0, bool output) {
  auto fits = [ne0](GgmlType t) { return ne0 % ggml_block_elements(t) == 0; };
  if (fits(type)) return type;
  GgmlType instead;
  if (output) {
    instead = GgmlType::Q8_0;
  } else {
    switch (type) {
      case GgmlType::Q4_K: instead = GgmlType::Q5_0; break;
      case GgmlType::Q5_K: instead = GgmlType::Q5_1; break;
      case GgmlType::Q6_K: instead = GgmlType::Q8_0; break;
      case GgmlType::IQ4_XS: instead = GgmlType::IQ4_NL; break;
      default: return std::nullopt;
    }
  }
  return fits(instead) ? instead : GgmlType::F16;
}

}  // namespace r1pi
