// The slices of the GGUF tensors that one shard needs, and where their bytes come from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/llama_config.h"
#include "model/shard.h"

namespace r1pi {

// Rows [row_begin, row_end) of a tensor, restricted to columns [col_begin, col_end).
struct TensorSlice {
  const GgufTensorInfo* tensor = nullptr;
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;

  int64_t rows() const { return row_end - row_begin; }
  size_t row_bytes() const;                    // bytes of one sliced row
  size_t bytes() const { return size_t(rows()) * row_bytes(); }
};

// Every slice a shard holds, in a fixed order (the order the root sends them with
// --weights-from-root): the embedding, then per layer wq wk wv wo w1 w3 w2 and the two norms,
// then the output norm and the output rows (absent when tied). Throws r1pi::Error naming the file
// when a tensor is missing or a column split falls inside a block.
std::vector<TensorSlice> plan_slices(const GgufFile& file, const LlamaConfig& config,
                                     const Shard& shard);

// Copies a slice's bytes (rows packed, row_bytes() apart) into dst.
class SliceSource {
 public:
  virtual ~SliceSource() = default;
  virtual void read(const TensorSlice& slice, uint8_t* dst) = 0;
};

// Reads from the mapped file, dropping each tensor's pages once its slice is copied.
class MappedSliceSource final : public SliceSource {
 public:
  explicit MappedSliceSource(const GgufFile& file) : file_(file) {}
  void read(const TensorSlice& slice, uint8_t* dst) override;

 private:
  const GgufFile& file_;
};

}  // namespace r1pi
