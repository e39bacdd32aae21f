#include "tools/quantize_model.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "ggml/quantize.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tools/progress.h"
#include "tools/quant_mix.h"
#include "tools/row_writer.h"

namespace r1pi {

namespace {

// The layer of "blk.N.…", or 0.
uint32_t layer_of(const std::string& name) {
  return name.rfind("blk.", 0) == 0 ? uint32_t(std::strtoul(name.c_str() + 4, nullptr, 10)) : 0;
}

uint32_t count_layers(const GgufFile& f) {
  uint32_t n = 0;
  for (const GgufTensorInfo& t : f.tensors())
    if (t.name.rfind("blk.", 0) == 0) n = std::max(n, layer_of(t.name) + 1);
  return n;
}

// Query heads per KV head (some mixes give attn_v more bits from 4 on); 1 when the file does not
// say.
uint32_t query_heads_per_kv_head(const GgufFile& f) {
  if (!f.find("general.architecture")) return 1;
  const std::string arch = f.get_string("general.architecture");
  const std::string heads = arch + ".attention.head_count", kv = arch + ".attention.head_count_kv";
  if (!f.find(heads)) return 1;
  const uint32_t n_heads = f.get_u32(heads), n_kv = f.find(kv) ? f.get_u32(kv) : n_heads;
  return n_kv ? n_heads / n_kv : 1;
}

struct Target {
  const QuantMix* mix = nullptr;
  GgmlType type = GgmlType::F32;  // without a mix
  uint32_t file_type = 0;
};

Target parse_target(const std::string& name) {
  Target t;
  if ((t.mix = quant_mix_named(name))) {
    t.file_type = t.mix->file_type;
  } else if (std::optional<GgmlType> type = ggml_matrix_type_named(name)) {
    t.type = *type;
    t.file_type = ggml_traits(*type).file_type;
  } else {
    std::string names;
    for (const std::string& n : ggml_matrix_type_names()) names += " " + n;
    for (const std::string& n : quant_mix_names()) names += " " + n;
    throw Error("quantize: unknown type '" + name + "' (types:" + names + ")");
  }
  return t;
}

GgmlType type_for(const Target& t, const GgufTensorInfo& info, uint32_t n_layers, uint32_t gqa) {
  const bool output = info.name == "output.weight";
  // A mixture of experts' router stays as it is (F32 from the converter), as llama-quantize leaves it.
  const std::string_view router = ".ffn_gate_inp.weight";
  if (info.name.size() >= router.size() && info.name.compare(info.name.size() - router.size(), router.size(), router) == 0)
    return info.type;
  if (t.mix) return mix_tensor_type(*t.mix, info.name, layer_of(info.name), n_layers, output, gqa);
  // llama-quantize gives output.weight Q6_K for every block type but Q8_0 (and Q6_K itself).
  const bool low_bits = ggml_block_elements(t.type) > 1 && t.type != GgmlType::Q8_0;
  return output && low_bits ? GgmlType::Q6_K : t.type;
}

}  // namespace

void quantize_model(const std::string& in_path, const std::string& out_path, const std::string& type_name,
                    bool progress, int threads) {
  refuse_output_over_input(out_path, {in_path});
  const Target target = parse_target(type_name);
  const GgufFile in = GgufFile::open(in_path);
  const uint32_t n_layers = count_layers(in), gqa = query_heads_per_kv_head(in);

  GgufWriter w(uint32_t(in.alignment()));
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.alignment") continue;  // the writer's own, from its constructor
    w.add(key, key == "general.file_type" ? GgufValue::u32(target.file_type) : value);
  }
  if (!in.find("general.file_type")) w.add("general.file_type", GgufValue::u32(target.file_type));

  std::vector<GgmlType> types;
  uint64_t total = 0;
  for (const GgufTensorInfo& t : in.tensors()) {
    GgmlType type = t.type;
    if (t.ne.size() >= 2) {
      if (t.type != GgmlType::F32 && t.type != GgmlType::F16 && t.type != GgmlType::BF16)
        throw Error(in_path + ": tensor " + t.name + " is " + std::string(ggml_type_name(t.type)) +
                    ": quantize reads F32, F16 or BF16 matrices (a file as llama.cpp's converter writes it)");
      const GgmlType chosen = type_for(target, t, n_layers, gqa);
      const std::optional<GgmlType> fitting = row_fallback(chosen, t.ne[0], t.name == "output.weight");
      if (!fitting)
        throw Error("quantize: tensor " + t.name + " has rows of " + std::to_string(t.ne[0]) + ", not a multiple of " +
                    std::string(ggml_type_name(chosen)) + "'s " + std::to_string(ggml_block_elements(chosen)) +
                    " elements (llama-quantize refuses it too; a K-quant or a mix falls back to a 32-element type)");
      type = *fitting;
    }
    w.add_tensor(t.name, t.ne, type);
    types.push_back(type);
    total += ggml_row_bytes(type, t.ne[0]) * t.rows();
  }

  w.open(out_path);  // a failure from here on leaves out_path as it was
  Progress bar("quantizing to " + out_path, total, progress);
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const GgufTensorInfo& t = in.tensors()[i];
    const uint8_t* data = in.tensor_data(t);
    if (types[i] == t.type) {
      w.write_data(data, t.n_bytes);
      bar.add(t.n_bytes);
      continue;
    }
    const size_t in_row = ggml_row_bytes(t.type, t.ne[0]);
    write_quantized_rows(w, types[i], t.ne[0], t.rows(),
                         [&](uint64_t r, float* row) { dequantize_row(t.type, data + r * in_row, row, int64_t(t.ne[0])); },
                         bar, threads);
  }
  w.close();
  bar.finish();
}

}  // namespace r1pi
