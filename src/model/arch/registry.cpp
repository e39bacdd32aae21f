// The registry: every architecture r1pi runs, found by general.architecture, and the rows they
// share.
#include "model/arch/architectures.h"

#include "model/model_config.h"

namespace r1pi {

std::vector<HyperParam> transformer_params() {
  using C = ModelConfig;
  return {
      {"context_length", &C::n_ctx_train},
      {"embedding_length", &C::dim},
      {"block_count", &C::n_layers},
      {"feed_forward_length", &C::ffn_dim},
      {"attention.head_count", &C::n_heads},
      {"attention.head_count_kv", &C::n_kv_heads, [](const C& c) { return double(c.n_heads); }},
      {"attention.key_length", &C::head_dim,
       [](const C& c) { return double(c.n_heads ? c.dim / c.n_heads : 0); }, false},
      {"rope.dimension_count", &C::rope_dim, [](const C& c) { return double(c.head_dim); }},
      {"attention.layer_norm_rms_epsilon", &C::rms_eps, [](const C&) { return 1e-5; }},
      {"rope.freq_base", &C::rope_base, [](const C&) { return 10000.0; }},
  };
}

const std::vector<const Architecture*>& architectures() {
  static const std::vector<const Architecture*> all = {&llama_architecture()};
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
