#include "tools/quant_mix.h"

#include <array>

#include "common/ascii_lower.h"

namespace r1pi {
namespace {

// llama-quant.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool use_more_bits(uint32_t i, uint32_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Each mix's rules for attn_v, ffn_down and attn_output (llama_tensor_get_type without an
// importance matrix, for a model that is not Falcon, a 70B or Mixtral's 8 experts: a mixture of
// 128 experts, as Qwen3-30B-A3B, takes these rules, ffn_down_exps as ffn_down).
using enum MixRole;
GgmlType q2_k(const MixPlace& at, GgmlType base) {
  if (at.role == AttnV) return at.gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
  if (at.role == FfnDown || at.role == AttnOutput) return GgmlType::Q3_K;
  return base;
}
GgmlType q3_k_m(const MixPlace& at, GgmlType base) {
  if (at.role == AttnV) return at.layer < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
  if (at.role == FfnDown) return at.layer < at.n_layers / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
  if (at.role == AttnOutput) return GgmlType::Q4_K;
  return base;
}
GgmlType q3_k_l(const MixPlace& at, GgmlType base) {
  return at.role == AttnV || at.role == FfnDown || at.role == AttnOutput ? GgmlType::Q5_K : base;
}
GgmlType k_s(const MixPlace&, GgmlType base) { return base; }  // Q3_K_S, Q5_K_S
GgmlType q4_k_s(const MixPlace& at, GgmlType base) {
  if (at.role == AttnV && at.layer < 4) return GgmlType::Q5_K;
  if (at.role == FfnDown && at.layer < at.n_layers / 8) return GgmlType::Q5_K;
  return base;
}
GgmlType k_m(const MixPlace& at, GgmlType base) {  // Q4_K_M, Q5_K_M
  const bool sensitive = at.role == AttnV || at.role == FfnDown;
  return sensitive && use_more_bits(at.layer, at.n_layers) ? GgmlType::Q6_K : base;
}
GgmlType iq4(const MixPlace& at, GgmlType base) {  // IQ4_NL, IQ4_XS
  if (at.role == AttnV && at.gqa >= 4) return GgmlType::Q5_K;
  if (at.role == FfnDown && at.layer < at.n_layers / 8) return GgmlType::Q5_K;
  return base;
}
// MXFP4_MOE, the file type of gpt-oss's published GGUFs: the experts MXFP4, every other matrix
// (output.weight too) Q8_0.
GgmlType mxfp4_moe(const MixPlace& at, GgmlType base) { return at.experts ? base : GgmlType::Q8_0; }

constexpr std::array kMixes = {
    QuantMix{"q2_k", GgmlType::Q2_K, 10, q2_k},     QuantMix{"q3_k_s", GgmlType::Q3_K, 11, k_s},
    QuantMix{"q3_k_m", GgmlType::Q3_K, 12, q3_k_m}, QuantMix{"q3_k_l", GgmlType::Q3_K, 13, q3_k_l},
    QuantMix{"q4_k_s", GgmlType::Q4_K, 14, q4_k_s}, QuantMix{"q4_k_m", GgmlType::Q4_K, 15, k_m},
    QuantMix{"q5_k_s", GgmlType::Q5_K, 16, k_s},    QuantMix{"q5_k_m", GgmlType::Q5_K, 17, k_m},
    QuantMix{"iq4_nl", GgmlType::IQ4_NL, 25, iq4},  QuantMix{"iq4_xs", GgmlType::IQ4_XS, 30, iq4},
    QuantMix{"mxfp4_moe", GgmlType::MXFP4, 38, mxfp4_moe, GgmlType::Q8_0},
};

}  // namespace

const QuantMix* quant_mix_named(std::string_view name) {
  const std::string lower = ascii_lower(name);
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
                         bool output, uint32_t gqa) {
  if (output) return mix.output;
  const MixRole role = ends_with(name, ".attn_v.weight")        ? AttnV
                       : ends_with(name, ".ffn_down.weight")    ? FfnDown
                       : ends_with(name, ".ffn_down_exps.weight") ? FfnDown
                       : ends_with(name, ".attn_output.weight") ? AttnOutput
                                                                : Other;
  const bool experts = ends_with(name, "_exps.weight");
  return mix.rule({role, layer, n_layers, gqa, experts}, mix.base);
}

std::optional<GgmlType> row_fallback(GgmlType type, uint64_t ne0, bool output) {
  auto fits = [ne0](GgmlType t) { return ne0 % ggml_block_elements(t) == 0; };
  if (fits(type)) return type;
  GgmlType instead;
  if (output) {
    instead = GgmlType::Q8_0;
  } else {
    switch (type) {
      case GgmlType::Q2_K:
      case GgmlType::Q3_K:
      case GgmlType::IQ4_XS: instead = GgmlType::IQ4_NL; break;
      case GgmlType::Q4_K: instead = GgmlType::Q5_0; break;
      case GgmlType::Q5_K: instead = GgmlType::Q5_1; break;
      case GgmlType::Q6_K: instead = GgmlType::Q8_0; break;
      default: return std::nullopt;
    }
  }
  return fits(instead) ? instead : GgmlType::F16;
}

}  // namespace r1pi
