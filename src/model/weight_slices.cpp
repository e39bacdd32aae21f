#include "model/weight_slices.h"

#include <cstring>

#include "common/error.h"

namespace r1pi {

size_t TensorSlice::row_bytes() const {
  return ggml_row_bytes(tensor->type, uint64_t(col_end - col_begin));
}

namespace {

struct Planner {
  const GgufFile& file;
  std::vector<TensorSlice> slices;

  // col_end < 0: all columns.
  void add(const std::string& name, int64_t row_begin, int64_t row_end, int64_t col_begin = 0,
           int64_t col_end = -1) {
    const GgufTensorInfo* info = file.find_tensor(name);
    if (!info) throw Error(file.path() + ": missing tensor '" + name + "'");
    if (col_end < 0) col_end = int64_t(info->ne[0]);
    const int64_t block = int64_t(ggml_block_elements(info->type));
    if (col_begin % block != 0 || col_end % block != 0)
      throw Error(file.path() + ": tensor '" + name + "' (" + std::string(ggml_type_name(info->type)) +
                  ", blocks of " + std::to_string(block) + ") cannot be split at column " +
                  std::to_string(col_begin % block ? col_begin : col_end) +
                  "; use another rank count");
    slices.push_back({info, row_begin, row_end, col_begin, col_end});
  }
  void add_vector(const std::string& name) { add(name, 0, 1); }
};

}  // namespace

std::vector<TensorSlice> plan_slices(const GgufFile& file, const LlamaConfig& config,
                                     const Shard& shard) {
  Planner p{file, {}};
  const int64_t hd = config.head_dim;
  const int64_t group = config.n_heads / config.n_kv_heads;
  const int64_t q_begin = shard.kv_heads.begin * group * hd, q_end = shard.kv_heads.end * group * hd;
  const int64_t kv_begin = shard.kv_heads.begin * hd, kv_end = shard.kv_heads.end * hd;
  p.add("token_embd.weight", 0, config.n_vocab);
  for (uint32_t l = 0; l < config.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    p.add(b + "attn_q.weight", q_begin, q_end);
    p.add(b + "attn_k.weight", kv_begin, kv_end);
    p.add(b + "attn_v.weight", kv_begin, kv_end);
    p.add(b + "attn_output.weight", 0, config.dim, q_begin, q_end);
    p.add(b + "ffn_gate.weight", shard.ffn.begin, shard.ffn.end);
    p.add(b + "ffn_up.weight", shard.ffn.begin, shard.ffn.end);
    p.add(b + "ffn_down.weight", 0, config.dim, shard.ffn.begin, shard.ffn.end);
    p.add_vector(b + "attn_norm.weight");
    p.add_vector(b + "ffn_norm.weight");
  }
  p.add_vector("output_norm.weight");
  if (!config.tied_output) p.add("output.weight", shard.vocab.begin, shard.vocab.end);
  return p.slices;
}

void MappedSliceSource::read(const TensorSlice& s, uint8_t* dst) {
  const uint8_t* src = file_.tensor_data(*s.tensor);
  const size_t src_row_bytes = ggml_row_bytes(s.tensor->type, s.tensor->ne[0]);
  const size_t col_offset = ggml_row_bytes(s.tensor->type, uint64_t(s.col_begin));
  const size_t row_bytes = s.row_bytes();
  if (row_bytes == src_row_bytes) {
    std::memcpy(dst, src + size_t(s.row_begin) * src_row_bytes, s.bytes());
  } else {
    for (int64_t r = 0; r < s.rows(); ++r)
      std::memcpy(dst + size_t(r) * row_bytes,
                  src + size_t(s.row_begin + r) * src_row_bytes + col_offset, row_bytes);
  }
  file_.drop_pages(*s.tensor);
}

}  // namespace r1pi
