// The embedding, in the big shape's terms (s: small, b: big):
//   - every extra dimension, head, KV head, FFN unit and layer is zero: zero rows and columns add
//     exact zeros, so the residual stream keeps zeros past the small dim and a zero layer adds
//     nothing (its query 0 attends uniformly to values 0; its FFN gates are silu(0) * 0);
//   - RMSNorm divides by the root mean square over dim_b, sqrt(dim_s / dim_b) times the small
//     one: the norm weights are multiplied by sqrt(dim_s / dim_b) and epsilon by dim_s / dim_b,
//     which gives back the small model's normalised vector;
//   - attention scores are divided by sqrt(head_dim_b): wq is multiplied by
//     sqrt(head_dim_b / head_dim_s); RoPE rotates the small head's dimensions only
//     (llama.rope.dimension_count = head_dim_s, the small model's base): the same angles;
//   - small KV head j becomes big KV head j * (kv_b / kv_s), and its query heads the first ones of
//     that KV head's group, so each still reads its own KV head (and the ranks share the work);
//   - the vocabulary keeps the small tokenizer, padded with control tokens to the big shape's
//     size; their output rows copy the row of the unknown token, so they tie with it and lose
//     every tie (lower id first): a greedy pick is always a small-model token.
// When the ratios are powers of four (dim 128 in 512, head_dim 16 in 64) every factor is exact.
#include "tools/inflate.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "ggml/quantize.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "model/tensor_table.h"
#include "tokenizer/vocab.h"
#include "tools/gguf_metadata.h"
#include "tools/model_maker.h"
#include "tools/model_presets.h"
#include "tools/progress.h"
#include "tools/vocab_padding.h"

namespace r1pi {

namespace {

// Where the small model's heads sit in the big shape.
struct HeadPlacement {
  uint32_t small_kv, small_group, big_kv, big_group, kv_stride;

  // The big query head of small query head h.
  uint32_t big_query(uint32_t h) const {
    return (h / small_group) * kv_stride * big_group + h % small_group;
  }
  // The small query head of big query head H, or -1 for a padding head.
  int small_query(uint32_t H) const {
    const uint32_t J = H / big_group, r = H % big_group;
    if (J % kv_stride != 0 || J / kv_stride >= small_kv || r >= small_group) return -1;
    return int(J / kv_stride * small_group + r);
  }
  int small_kv_head(uint32_t J) const {
    return J % kv_stride == 0 && J / kv_stride < small_kv ? int(J / kv_stride) : -1;
  }
};

// One tensor of the small file, row by row as floats.
class SmallTensor {
 public:
  SmallTensor(const GgufFile& file, const std::string& name) : file_(file) {
    info_ = file.find_tensor(name);
    if (!info_) throw Error(file.path() + ": no tensor " + name);
  }
  uint64_t cols() const { return info_->ne[0]; }
  void row(uint64_t r, float* out) const {
    const size_t bytes = ggml_row_bytes(info_->type, cols());
    dequantize_row(info_->type, file_.tensor_data(*info_) + r * bytes, out, int64_t(cols()));
  }

 private:
  const GgufFile& file_;
  const GgufTensorInfo* info_;
};

// Fills row r of a big tensor (zeroed beforehand); false: the row stays zero.
using RowFill = std::function<bool(uint64_t r, float* row)>;

void write_rows(GgufWriter& w, GgmlType type, uint64_t cols, uint64_t rows, const RowFill& fill,
                Progress& progress) {
  const size_t row_bytes = ggml_row_bytes(type, cols);
  std::vector<float> row(cols), zero(cols, 0.0f);
  std::vector<uint8_t> out(row_bytes), zero_bytes(row_bytes);
  quantize_row(type, zero.data(), zero_bytes.data(), int64_t(cols));
  for (uint64_t r = 0; r < rows; ++r) {
    std::fill(row.begin(), row.end(), 0.0f);
    if (fill(r, row.data())) {
      quantize_row(type, row.data(), out.data(), int64_t(cols));
      w.write_data(out.data(), row_bytes);
    } else {
      w.write_data(zero_bytes.data(), row_bytes);
    }
    progress.add(row_bytes);
  }
}

void check_fits(const ModelConfig& s, const ModelConfig& b, const std::string& path) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw Error(path + " does not fit the shape: " + what);
  };
  need(b.dim >= s.dim, "dim " + std::to_string(s.dim) + " > " + std::to_string(b.dim));
  need(b.n_layers >= s.n_layers, "more layers than " + std::to_string(b.n_layers));
  need(b.head_dim >= s.head_dim, "head_dim " + std::to_string(s.head_dim) + " > " + std::to_string(b.head_dim));
  need(b.n_kv_heads >= s.n_kv_heads, "more KV heads than " + std::to_string(b.n_kv_heads));
  need(b.n_heads / b.n_kv_heads >= s.n_heads / s.n_kv_heads, "more query heads per KV head");
  need(b.ffn_dim >= s.ffn_dim, "FFN " + std::to_string(s.ffn_dim) + " > " + std::to_string(b.ffn_dim));
  need(s.rope_freq_factors.empty(), "RoPE frequency scaling is not supported");
  need(s.n_experts == 0 && b.n_experts == 0, "a mixture of experts is not supported (inflate embeds dense models)");
}

}  // namespace

void inflate_model(const std::string& small_path, const MakeOptions& o, const std::string& out_path) {
  refuse_output_over_input(out_path, {small_path});
  const GgufFile file = GgufFile::open(small_path);
  const ModelConfig s = ModelConfig::from_gguf(file);
  Vocab vocab = Vocab::from_gguf(file);
  ModelConfig b = resolve_shape(o, uint32_t(vocab.tokens.size()));
  check_fits(s, b, small_path);
  pad_vocab(vocab, b.n_vocab, VocabPadding::ReservedSpecial);
  const float norm_scale = float(std::sqrt(double(s.dim) / double(b.dim)));
  const float query_scale = float(std::sqrt(double(b.head_dim) / double(s.head_dim)));
  b.name = "inflated " + s.name + " (" + o.preset + " shape)";
  b.rms_eps = float(double(s.rms_eps) * double(s.dim) / double(b.dim));
  b.rope_base = s.rope_base;
  b.rope_dim = s.rope_dim;
  b.rope_freq_factors.clear();
  b.n_ctx_train = s.n_ctx_train;
  const uint32_t stride = b.n_kv_heads % s.n_kv_heads == 0 ? b.n_kv_heads / s.n_kv_heads : 1;
  const HeadPlacement heads{s.n_kv_heads, s.n_heads / s.n_kv_heads, b.n_kv_heads, b.n_heads / b.n_kv_heads,
                            stride};
  const uint32_t hd_s = s.head_dim, hd_b = b.head_dim;
  const std::string output_name = s.tied_output ? "token_embd.weight" : "output.weight";
  const uint64_t pad_source = vocab.unk_id >= 0 ? uint64_t(vocab.unk_id) : 0;

  GgufWriter w;
  add_model_metadata(w, b, ggml_traits(o.matrix_type).file_type);
  add_vocab_metadata(w, vocab);
  if (!vocab.add_space_prefix) w.add("tokenizer.ggml.add_space_prefix", GgufValue::boolean(false));
  const ModelConfig& big = b;
  const std::vector<TensorInstance> tensors = model_tensors(big);
  uint64_t total = 0;
  struct Planned {
    const TensorInstance* t;
    GgmlType type;
    std::vector<uint64_t> ne;
  };
  std::vector<Planned> planned;
  for (const TensorInstance& t : tensors) {
    if (std::holds_alternative<std::monostate>(t.spec->fills)) continue;  // rope_freqs: none
    const bool output = t.spec->presence == Presence::ElseTokenEmbd;
    const GgmlType type = !t.spec->is_matrix() ? GgmlType::F32 : output ? o.output_type : o.matrix_type;
    const std::vector<uint64_t> ne = t.spec->shape(big);
    w.add_tensor(t.name, ne, type);
    total += ggml_row_bytes(type, ne[0]) * (ne.size() > 1 ? ne[1] : 1);
    planned.push_back({&t, type, ne});
  }

  w.open(out_path);  // a failure from here on leaves out_path as it was
  Progress progress("writing " + out_path, total, o.progress);
  std::vector<float> small_row;
  for (const Planned& p : planned) {
    const std::string& name = p.t->name;
    const uint64_t cols = p.ne[0], rows = p.ne.size() > 1 ? p.ne[1] : 1;
    const bool real_layer = !p.t->spec->per_layer() || p.t->layer < s.n_layers;
    const std::string_view kind = p.t->spec->name;
    std::optional<SmallTensor> small;
    if (real_layer) {
      small.emplace(file, name == "output.weight" ? output_name : name);
      small_row.resize(small->cols());
    }
    // Row r of the small tensor into the start of the big row, times scale.
    auto copy = [&](uint64_t r, float* row, float scale) {
      small->row(r, small_row.data());
      for (size_t i = 0; i < small_row.size(); ++i) row[i] = small_row[i] * scale;
      return true;
    };
    RowFill fill = [](uint64_t, float*) { return false; };  // a zero layer
    if (real_layer) {
      if (!p.t->spec->is_matrix()) {
        fill = [&](uint64_t, float* row) { return copy(0, row, norm_scale); };
      } else if (kind == "token_embd.weight") {
        fill = [&](uint64_t r, float* row) { return r < s.n_vocab && copy(r, row, 1.0f); };
      } else if (kind == "output.weight") {
        fill = [&](uint64_t r, float* row) { return copy(r < s.n_vocab ? r : pad_source, row, 1.0f); };
      } else if (kind == "attn_q.weight") {
        fill = [&](uint64_t r, float* row) {
          const int h = heads.small_query(uint32_t(r / hd_b));
          return h >= 0 && r % hd_b < hd_s && copy(uint64_t(h) * hd_s + r % hd_b, row, query_scale);
        };
      } else if (kind == "attn_k.weight" || kind == "attn_v.weight") {
        fill = [&](uint64_t r, float* row) {
          const int j = heads.small_kv_head(uint32_t(r / hd_b));
          return j >= 0 && r % hd_b < hd_s && copy(uint64_t(j) * hd_s + r % hd_b, row, 1.0f);
        };
      } else if (kind == "attn_output.weight") {
        fill = [&](uint64_t r, float* row) {
          if (r >= s.dim) return false;
          small->row(r, small_row.data());
          for (uint32_t h = 0; h < s.n_heads; ++h)
            std::memcpy(row + size_t(heads.big_query(h)) * hd_b, small_row.data() + size_t(h) * hd_s,
                        hd_s * sizeof(float));
          return true;
        };
      } else if (kind == "ffn_gate.weight" || kind == "ffn_up.weight") {
        fill = [&](uint64_t r, float* row) { return r < s.ffn_dim && copy(r, row, 1.0f); };
      } else if (kind == "ffn_down.weight") {
        fill = [&](uint64_t r, float* row) { return r < s.dim && copy(r, row, 1.0f); };
      } else {
        throw Error("inflate: no rule for tensor " + name);
      }
    }
    write_rows(w, p.type, cols, rows, fill, progress);
  }
  w.close();
  progress.finish();
}

}  // namespace r1pi
