#include "model/llama_weights.h"

#include <cstring>
#include <string>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "neon/quantize.h"

namespace r1pi {

namespace {

// One rectangle of one tensor that this rank needs.
struct SliceSpec {
  std::string name;
  int64_t row_begin, row_end, col_begin, col_end;  // col_end < 0: all columns
  Matrix* dest;
};

const GgufTensorInfo& require_tensor(const GgufFile& file, const std::string& name) {
  const GgufTensorInfo* info = file.find_tensor(name);
  if (!info) throw Error(file.path() + ": missing tensor '" + name + "'");
  return *info;
}

std::vector<float> read_vector(const GgufFile& file, const std::string& name) {
  const GgufTensorInfo& info = require_tensor(file, name);
  std::vector<float> out(info.n_elements);
  dequantize_row(info.type, file.tensor_data(info), out.data(), int64_t(info.n_elements));
  return out;
}

}  // namespace

Matrix LlamaWeights::copy_slice(const GgufFile& file, const char* name, int64_t row_begin,
                                int64_t row_end, int64_t col_begin, int64_t col_end) {
  const GgufTensorInfo& info = require_tensor(file, name);
  const int64_t cols = int64_t(info.ne[0]);
  const int64_t block = int64_t(ggml_block_elements(info.type));
  if (col_end < 0) col_end = cols;
  if (col_begin % block != 0 || col_end % block != 0)
    throw Error(file.path() + ": tensor '" + name + "' cannot be split at column " +
                std::to_string(col_begin % block ? col_begin : col_end) + " (blocks of " +
                std::to_string(block) + ")");
  Matrix m;
  m.type = info.type;
  m.cols = col_end - col_begin;
  m.rows = row_end - row_begin;
  m.row_bytes = ggml_row_bytes(info.type, uint64_t(m.cols));
  const size_t src_row_bytes = ggml_row_bytes(info.type, uint64_t(cols));
  const size_t src_col_offset = ggml_row_bytes(info.type, uint64_t(col_begin));
  buffers_.emplace_back(new uint8_t[m.bytes()]);
  uint8_t* dst = buffers_.back().get();
  const uint8_t* src = file.tensor_data(info);
  if (m.row_bytes == src_row_bytes) {
    std::memcpy(dst, src + size_t(row_begin) * src_row_bytes, m.bytes());
  } else {
    for (int64_t r = 0; r < m.rows; ++r)
      std::memcpy(dst + size_t(r) * m.row_bytes,
                  src + size_t(row_begin + r) * src_row_bytes + src_col_offset, m.row_bytes);
  }
  m.data = dst;
  return m;
}

LlamaWeights LlamaWeights::load(const GgufFile& file, const LlamaConfig& config, const Shard& shard,
                                const std::function<void(uint64_t, uint64_t)>& progress) {
  LlamaWeights w;
  w.layers.resize(config.n_layers);
  const int64_t hd = config.head_dim;
  const int64_t group = config.n_heads / config.n_kv_heads;
  const int64_t q_begin = shard.kv_heads.begin * group * hd, q_end = shard.kv_heads.end * group * hd;
  const int64_t kv_begin = shard.kv_heads.begin * hd, kv_end = shard.kv_heads.end * hd;

  std::vector<SliceSpec> specs;
  specs.push_back({"token_embd.weight", 0, config.n_vocab, 0, -1, &w.token_embd});
  for (uint32_t l = 0; l < config.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[l];
    specs.push_back({p + "attn_q.weight", q_begin, q_end, 0, -1, &L.wq});
    specs.push_back({p + "attn_k.weight", kv_begin, kv_end, 0, -1, &L.wk});
    specs.push_back({p + "attn_v.weight", kv_begin, kv_end, 0, -1, &L.wv});
    specs.push_back({p + "attn_output.weight", 0, config.dim, q_begin, q_end, &L.wo});
    specs.push_back({p + "ffn_gate.weight", shard.ffn.begin, shard.ffn.end, 0, -1, &L.w1});
    specs.push_back({p + "ffn_up.weight", shard.ffn.begin, shard.ffn.end, 0, -1, &L.w3});
    specs.push_back({p + "ffn_down.weight", 0, config.dim, shard.ffn.begin, shard.ffn.end, &L.w2});
  }
  if (!config.tied_output)
    specs.push_back({"output.weight", shard.vocab.begin, shard.vocab.end, 0, -1, &w.output});

  uint64_t total = 0, done = 0;
  for (const SliceSpec& s : specs) {
    const GgufTensorInfo& info = require_tensor(file, s.name);
    const int64_t cols = s.col_end < 0 ? int64_t(info.ne[0]) : s.col_end - s.col_begin;
    total += uint64_t(s.row_end - s.row_begin) * ggml_row_bytes(info.type, uint64_t(cols));
  }
  for (const SliceSpec& s : specs) {
    *s.dest = w.copy_slice(file, s.name.c_str(), s.row_begin, s.row_end, s.col_begin, s.col_end);
    done += s.dest->bytes();
    if (progress) progress(done, total);
  }
  if (config.tied_output) {
    // The output matrix is the embedding: its local rows are a view, not a second copy.
    w.output = w.token_embd;
    w.output.data = w.token_embd.row(shard.vocab.begin);
    w.output.rows = shard.vocab.size();
  }

  for (uint32_t l = 0; l < config.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.layers[l].attn_norm = read_vector(file, p + "attn_norm.weight");
    w.layers[l].ffn_norm = read_vector(file, p + "ffn_norm.weight");
  }
  w.output_norm = read_vector(file, "output_norm.weight");
  return w;
}

uint64_t LlamaWeights::total_bytes() const {
  uint64_t n = token_embd.bytes() + output_norm.size() * sizeof(float);
  if (output.data < token_embd.data || output.data >= token_embd.data + token_embd.bytes())
    n += output.bytes();
  for (const LayerWeights& L : layers)
    n += L.wq.bytes() + L.wk.bytes() + L.wv.bytes() + L.wo.bytes() + L.w1.bytes() + L.w2.bytes() +
         L.w3.bytes() + (L.attn_norm.size() + L.ffn_norm.size()) * sizeof(float);
  return n;
}

}  // namespace r1pi
