// make_model: a random-weight GGUF of any architecture and shape, written as a stream.
#include "tools/model_maker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "model/tensor_table.h"
#include "ggml/quantize.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tools/gguf_metadata.h"
#include "tools/model_presets.h"
#include "tools/progress.h"
#include "tools/random_weights.h"
#include "tools/row_writer.h"
#include "tools/vocab_padding.h"

namespace r1pi {

namespace {

// A tensor of uniform random values offset + amplitude * U[-1, 1).
struct RandomTensor {
  std::string name;
  std::vector<uint64_t> ne;
  GgmlType type;
  float offset;
  float amplitude;
};

// Amplitude of a uniform distribution with standard deviation sigma.
float uniform_amplitude(double sigma) { return static_cast<float>(sigma * std::sqrt(3.0)); }

// Scales chosen so that activations stay O(1) through any depth and the next token still depends
// on the current one (so greedy output of a random model tends to wander rather than repeat):
// unit-variance embeddings; input projections with variance 1/fan_in; residual projections (the
// column-split attn_output and ffn_down, whose partial sums ranks add) further scaled by
// 1/sqrt(2 * layers) so that the layers together add about as much to the residual stream as the
// embedding; logits with a spread of about 3. The tensors are the architecture's table's, in its
// order; rope_freqs (no weights member) is written apart.
std::vector<RandomTensor> plan_tensors(const ModelConfig& c, const MakeOptions& o) {
  const double in_dim = 1.0 / std::sqrt(static_cast<double>(c.dim));
  const double residual = 1.0 / std::sqrt(2.0 * c.n_layers);
  const float norm_noise = 0.1f;

  std::vector<RandomTensor> t;
  for (const TensorInstance& ti : model_tensors(c)) {
    const TensorSpec& spec = *ti.spec;
    if (std::holds_alternative<std::monostate>(spec.fills)) continue;
    const bool output = spec.presence == Presence::ElseTokenEmbd;
    if (output && c.tied_output) continue;
    const std::vector<uint64_t> ne = spec.shape(c);
    if (!spec.is_matrix()) {
      // Norm weights near 1; biases and attention sinks near 0.
      const bool bias = spec.name.ends_with(".bias") || spec.fills == WeightMember(&LayerWeights::sinks);
      t.push_back({ti.name, ne, GgmlType::F32, bias ? 0.0f : 1.0f, norm_noise});
      continue;
    }
    const double fan_in = static_cast<double>(ne[0]);
    // The experts' router: logits of spread ~1, so that the softmax keeps several experts in
    // play; F32 whatever the type, as llama-quantize leaves ffn_gate_inp.
    const bool router = spec.fills == WeightMember(&LayerWeights::router);
    double sigma = in_dim;                                        // input projections, the router
    if (spec.split.unit == Unit::None && !router) sigma = 1.0;    // the embedding
    else if (output) sigma = 3.0 * in_dim;                        // logits
    else if (spec.split.axis == Axis::Cols) sigma = residual / std::sqrt(fan_in);
    const GgmlType chosen = router ? GgmlType::F32
                            : o.mix ? mix_tensor_type(*o.mix, ti.name, ti.layer, c.n_layers, output,
                                                      c.n_kv_heads ? c.n_heads / c.n_kv_heads : 1)
                                    : output ? o.output_type : o.matrix_type;
    // Rows that do not hold whole blocks: llama-quantize's fallback type, where it has one.
    const std::optional<GgmlType> type = row_fallback(chosen, ne[0], output);
    if (!type)
      throw Error("make: " + ti.name + " has rows of " + std::to_string(ne[0]) + ", not a multiple of " +
                  std::string(ggml_type_name(chosen)) + "'s " + std::to_string(ggml_block_elements(chosen)) + " elements");
    t.push_back({ti.name, ne, *type, 0.0f, uniform_amplitude(sigma)});
  }
  return t;
}

uint64_t tensor_bytes(const std::vector<uint64_t>& ne, GgmlType type) {
  uint64_t rows = 1;
  for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
  return rows * ggml_row_bytes(type, ne[0]);
}

void write_random_tensor(GgufWriter& w, const RandomTensor& t, uint64_t seed, Progress& progress, int threads) {
  const uint64_t cols = t.ne[0];
  const uint64_t stream = tensor_seed(seed, t.name);
  uint64_t rows = 1;  // a per-expert tensor's rows: every expert's, one after the other
  for (size_t d = 1; d < t.ne.size(); ++d) rows *= t.ne[d];
  write_quantized_rows(w, t.type, cols, rows,
                       [&](uint64_t r, float* row) { random_row(stream, r, t.offset, t.amplitude, row, cols); },
                       progress, threads);
}

Vocab load_tokenizer(const MakeOptions& o) {
  return load_hf_tokenizer_json(o.tokenizer_json, o.deepseek_specials ? SpecialTokenNames::DeepSeekR1
                                                                      : SpecialTokenNames::Llama3);
}

}  // namespace

void make_model(const MakeOptions& o, const std::string& out_path) {
  refuse_output_over_input(out_path, {o.tokenizer_json});
  if (o.deepseek_specials && o.tokenizer_json.empty()) {
    throw Error("--deepseek-specials renames a tokenizer's special tokens: it needs --tokenizer");
  }
  // The tokenizer first: its size can decide the vocabulary size.
  Vocab vocab;
  if (!o.tokenizer_json.empty()) vocab = load_tokenizer(o);
  const ModelConfig shape = resolve_shape(o, static_cast<uint32_t>(vocab.tokens.size()));
  if (o.tokenizer_json.empty()) vocab = builtin_byte_vocab(static_cast<int32_t>(shape.n_vocab));
  // Llama 3's tokenizer names its own spare ids <|reserved_special_token_K|>: more of them continue
  // it. Other tokenizers are padded as llama.cpp's converter pads them.
  else pad_vocab(vocab, shape.n_vocab,
                 vocab.pre == "llama-bpe" ? VocabPadding::ReservedSpecial : VocabPadding::Unused);
  vocab.validate("vocabulary for " + out_path);

  GgufWriter w;
  add_model_metadata(w, shape, o.mix ? o.mix->file_type : ggml_traits(o.matrix_type).file_type);
  add_vocab_metadata(w, vocab);

  // rope_freqs.weight first, as llama.cpp's converter yields it before the model's tensors.
  const std::vector<float>& rope_factors = shape.rope_freq_factors;
  if (!rope_factors.empty()) w.add_tensor("rope_freqs.weight", {rope_factors.size()}, GgmlType::F32);
  const std::vector<RandomTensor> tensors = plan_tensors(shape, o);
  uint64_t total = rope_factors.size() * sizeof(float);
  for (const RandomTensor& t : tensors) {
    w.add_tensor(t.name, t.ne, t.type);
    total += tensor_bytes(t.ne, t.type);
  }

  w.open(out_path);  // a failure from here on leaves out_path as it was
  Progress progress("writing " + out_path, total, o.progress);
  if (!rope_factors.empty()) {
    w.write_data(rope_factors.data(), rope_factors.size() * sizeof(float));
    progress.add(rope_factors.size() * sizeof(float));
  }
  for (const RandomTensor& t : tensors) write_random_tensor(w, t, o.seed, progress, o.threads);
  w.close();
  progress.finish();
}

}  // namespace r1pi
