// import_llama2c: a llama2.c checkpoint (legacy float32 format) to an F32 GGUF.
//
// llama2.c stores matrices [out][in] row-major, which is exactly GGUF's [in, out] (ne[0] = in),
// and its RoPE rotates adjacent pairs like GGUF's normal mode, so the floats are copied unchanged:
// the tensors are declared in the checkpoint's own order and the file is streamed straight through.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"
#include "model/tensor_table.h"
#include "tools/gguf_metadata.h"
#include "tools/llama2c_vocab.h"
#include "tools/model_maker.h"
#include "tools/model_presets.h"

namespace r1pi {

static_assert(std::endian::native == std::endian::little,
              "llama2.c checkpoints and GGUF files are little-endian; so must the host be");

namespace {

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

// Header fields: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len.
struct Llama2cHeader {
  int32_t dim, hidden, layers, heads, kv_heads, vocab, seq_len;
};

// A run of floats in the checkpoint: one tensor to copy, or one to skip (name empty).
struct Segment {
  std::string name;
  std::vector<uint64_t> ne;

  uint64_t floats() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return n;
  }
};

// export.py's later formats start with this magic instead of a bare header.
constexpr int32_t kVersionedMagic = 0x616b3432;  // "ak42"

void check_header(const Llama2cHeader& h, const std::string& path) {
  if (h.dim == kVersionedMagic) {
    throw Error(path + ": a llama2.c checkpoint in export version " + std::to_string(h.hidden) +
                " (magic ak42); only the legacy float32 format (export.py --version 0) is supported");
  }
  // Generous bounds that also keep every size product far from overflowing 64 bits.
  auto in_range = [](int64_t v, int64_t max) { return v > 0 && v <= max; };
  const int64_t vocab = std::abs(int64_t{h.vocab});
  if (!in_range(h.dim, 1 << 16) || !in_range(h.hidden, 1 << 18) || !in_range(h.layers, 1 << 10) ||
      !in_range(h.heads, h.dim) || !in_range(h.kv_heads, h.heads) || !in_range(vocab, 1 << 22) ||
      !in_range(h.seq_len, 1 << 22) || vocab < 3) {
    throw Error(path + ": header (dim " + std::to_string(h.dim) + ", hidden " +
                std::to_string(h.hidden) + ", layers " + std::to_string(h.layers) + ", heads " +
                std::to_string(h.heads) + "/" + std::to_string(h.kv_heads) + ", vocab " +
                std::to_string(h.vocab) + ", seq_len " + std::to_string(h.seq_len) +
                ") is not that of a llama2.c checkpoint");
  }
}

// The checkpoint's floats in file order (see shared/data/README.md, section 1): llama2.c's order
// is its own (each weight for all layers in turn), the names and shapes are the tensor table's.
std::vector<Segment> checkpoint_layout(const Llama2cHeader& h, const ModelConfig& c) {
  using LW = ModelWeights;
  using L = LayerWeights;
  std::vector<Segment> s;
  auto add = [&](const WeightMember& member) {
    const TensorSpec& spec = spec_filling(c, member);
    for (uint32_t l = 0; l < (spec.per_layer() ? c.n_layers : 1); ++l)
      s.push_back({spec.gguf_name(l), spec.shape(c)});
  };
  add(&LW::token_embd);
  add(&L::attn_norm);
  for (auto m : {&L::wq, &L::wk, &L::wv, &L::wo}) add(m);
  add(&L::ffn_norm);
  for (auto m : {&L::w1, &L::w2, &L::w3}) add(m);
  add(&LW::output_norm);
  s.push_back({"", {uint64_t(h.seq_len), c.head_dim}});  // freq_cis_real and _imag: run.c ignores them
  if (h.vocab < 0) add(&LW::output);
  return s;
}

void copy_floats(FILE* in, GgufWriter& w, uint64_t n_bytes, const std::string& path) {
  std::vector<char> buf(std::min<uint64_t>(n_bytes, 4 << 20));
  while (n_bytes > 0) {
    const size_t n = std::min<uint64_t>(n_bytes, buf.size());
    if (std::fread(buf.data(), 1, n, in) != n) throw Error(path + ": read failed");
    w.write_data(buf.data(), n);
    n_bytes -= n;
  }
}

}  // namespace

void import_llama2c(const std::string& checkpoint_path, const std::string& out_path,
                    const std::string& tokenizer_bin) {
  refuse_output_over_input(out_path, {checkpoint_path, tokenizer_bin});
  const std::string& path = checkpoint_path;
  File in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) throw Error(path + ": cannot open the checkpoint");
  Llama2cHeader h;
  if (std::fread(&h, sizeof h, 1, in.get()) != 1) {
    throw Error(path + ": shorter than a llama2.c header (28 bytes)");
  }
  check_header(h, path);

  ModelConfig shape;
  shape.arch = find_architecture("llama");
  shape.name = "llama2.c " + std::filesystem::path(path).stem().string();
  shape.dim = h.dim;
  shape.n_layers = h.layers;
  shape.n_heads = h.heads;
  shape.n_kv_heads = h.kv_heads;
  if (h.dim % h.heads != 0)
    throw Error(path + ": dim " + std::to_string(h.dim) + " is not divisible by " + std::to_string(h.heads) + " heads");
  shape.head_dim = h.dim / h.heads;
  shape.rope_dim = shape.head_dim;
  shape.value_dim = shape.head_dim;
  shape.ffn_dim = h.hidden;
  shape.n_vocab = static_cast<uint32_t>(std::abs(h.vocab));
  shape.n_ctx_train = h.seq_len;
  shape.rope_base = 10000.0f;  // run.c's theta
  shape.rms_eps = 1e-5f;       // run.c's rmsnorm epsilon
  check_shape(shape, GgmlType::F32, GgmlType::F32, h.vocab > 0, path);
  const std::vector<Segment> layout = checkpoint_layout(h, shape);
  uint64_t expected = sizeof h;
  for (const Segment& s : layout) expected += s.floats() * sizeof(float);
  std::error_code ec;
  const uint64_t actual = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": " + ec.message());
  if (actual != expected) {
    throw Error(path + ": " + std::to_string(actual) + " bytes, but a llama2.c checkpoint with this "
                "header has " + std::to_string(expected) + (actual < expected ? " (truncated?)" : ""));
  }

  const Vocab vocab = llama2c_vocab(tokenizer_bin, shape.n_vocab);
  vocab.validate(tokenizer_bin.empty() ? path : tokenizer_bin);

  GgufWriter w;
  add_model_metadata(w, shape, ggml_traits(GgmlType::F32).file_type);
  add_vocab_metadata(w, vocab);
  for (const Segment& s : layout) {
    if (!s.name.empty()) w.add_tensor(s.name, s.ne, GgmlType::F32);
  }

  w.open(out_path);  // a failure from here on leaves out_path as it was
  for (const Segment& s : layout) {
    const uint64_t n_bytes = s.floats() * sizeof(float);
    if (s.name.empty()) {
      if (std::fseek(in.get(), static_cast<long>(n_bytes), SEEK_CUR) != 0) {
        throw Error(path + ": seek failed");
      }
    } else {
      copy_floats(in.get(), w, n_bytes, path);
    }
  }
  w.close();
}

}  // namespace r1pi
