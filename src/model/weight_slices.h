// The slices of the GGUF tensors that one shard needs, and where their bytes come from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/shard.h"

namespace r1pi {

struct TensorSpec;

// Rows [row_begin, row_end) of a tensor, restricted to columns [col_begin, col_end).
struct TensorSlice {
  const GgufTensorInfo* tensor = nullptr;
  const TensorSpec* spec = nullptr;  // its row of the architecture's tensor table
  uint32_t layer = 0;                // for per-layer tensors
  uint32_t expert = 0;               // for per-expert tensors: rows are the tensor's (expert, row)
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;

  int64_t rows() const { return row_end - row_begin; }
  size_t row_bytes() const;                    // bytes of one sliced row
  size_t bytes() const { return size_t(rows()) * row_bytes(); }
};

// Every slice a shard holds, from the architecture's tensor table (tensors the configuration
// reads, such as rope_freqs, and an absent tied output are left out), in a fixed order: the
// table's, global tensors once and per-layer ones for each layer in turn, a per-expert tensor as
// one slice per expert in expert order (the order the root sends them with --weights-from-root). Throws r1pi::Error naming the file when a tensor is
// missing or a column split falls inside a block.
std::vector<TensorSlice> plan_slices(const GgufFile& file, const ModelConfig& config,
                                     const Shard& shard);

// Copies a slice's bytes (rows packed, row_bytes() apart) into dst.
class SliceSource {
 public:
  virtual ~SliceSource() = default;
  virtual void read(const TensorSlice& slice, uint8_t* dst) = 0;
};

// Reads from the mapped file, dropping each tensor's pages once its slice (its last expert's) is
// copied.
class MappedSliceSource final : public SliceSource {
 public:
  explicit MappedSliceSource(const GgufFile& file) : file_(file) {}
  void read(const TensorSlice& slice, uint8_t* dst) override;

 private:
  const GgufFile& file_;
};

}  // namespace r1pi
