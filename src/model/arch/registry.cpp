// The registry: every architecture r1pi runs, found by general.architecture.
#include "model/arch/architectures.h"

namespace r1pi {

const std::vector<const Architecture*>& architectures() {
  static const std::vector<const Architecture*> all = {&llama_architecture(), &qwen2_architecture(),
                                                      &qwen3_architecture(), &qwen3moe_architecture(),
                                                      &gpt_oss_architecture()};
  return all;
}

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture* a : architectures())
    if (a->name == name) return a;
  return nullptr;
}

std::string architecture_names() {
  std::string names;
  for (const Architecture* a : architectures()) names += (names.empty() ? "" : ", ") + std::string(a->name);
  return names;
}

}  // namespace r1pi
