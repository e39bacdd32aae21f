// An architecture as data: its GGUF name, the hyper-parameters it reads (one row each, shared by
// the config loader and the model maker), its tensor table (model/tensor_table.h), its RoPE layout
// and which optional parts its blocks have. The rows themselves live in model/arch/, one file per
// architecture; a registry finds them by `general.architecture`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/tensor_table.h"

namespace r1pi {

struct ModelConfig;

// How RoPE pairs a head's elements: llama.cpp's "normal" mode rotates adjacent pairs (x[2i],
// x[2i+1]), as Llama does; its NEOX mode (Qwen, GPT-NeoX) rotates x[i] with x[i + rope_dim/2].
enum class RopeLayout : uint8_t { AdjacentPairs, NeoxHalves };

// One hyper-parameter: the metadata key after "<arch>.", the configuration field it fills, and
// what a file without the key means.
struct HyperParam {
  using Field = std::variant<uint32_t ModelConfig::*, float ModelConfig::*>;
  std::string_view key;
  Field field;
  // The value of an absent key, from the fields of the rows above it; nullptr: the key is required.
  double (*fallback)(const ModelConfig&) = nullptr;
  // The model maker writes every row, except those whose value is their fallback and that
  // llama.cpp's converters leave out in that case (attention.key_length of a dim / heads head).
  bool written_when_default = true;
};

// How a mixture of experts weighs the experts its router picks: qwen3moe takes the softmax over
// every expert's logit, then the k most probable, renormalised; gpt-oss takes the k largest
// logits, then the softmax over those k (layers/moe_routing.h).
enum class ExpertGating : uint8_t { SoftmaxTopK, TopKSoftmax };
// The gated FFN's activation of gate g and up u: silu(g) * u, or gpt-oss's clamped variant
// (layers/ffn_activation.h).
enum class FfnActivation : uint8_t { SiluMul, SwigluOai };

struct Architecture {
  std::string_view name;              // general.architecture, and the prefix of its keys
  std::vector<HyperParam> params;     // read in order: a fallback sees the rows before it
  std::vector<TensorSpec> tensors;    // in the order the model maker writes them
  RopeLayout rope = RopeLayout::AdjacentPairs;
  bool experts = false;               // every layer's FFN a mixture of experts (qwen3moe)
  ExpertGating gating = ExpertGating::SoftmaxTopK;
  FfnActivation activation = FfnActivation::SiluMul;

  std::string key(std::string_view param) const { return std::string(name) + "." + std::string(param); }
};

// The architecture named `name` (general.architecture); nullptr when r1pi has none.
const Architecture* find_architecture(std::string_view name);
// Every architecture r1pi runs, in the registry's order (tests run each one's "tiny" preset).
const std::vector<const Architecture*>& architectures();
// Every architecture's name, for messages ("llama").
std::string architecture_names();

}  // namespace r1pi
