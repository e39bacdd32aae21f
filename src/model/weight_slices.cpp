#include "model/weight_slices.h"

#include <cstring>

#include "common/error.h"
#include "model/tensor_table.h"

namespace r1pi {

size_t TensorSlice::row_bytes() const {
  return ggml_row_bytes(tensor->type, uint64_t(col_end - col_begin));
}

std::vector<TensorSlice> plan_slices(const GgufFile& file, const ModelConfig& config,
                                     const Shard& shard) {
  std::vector<TensorSlice> slices;
  for (const TensorInstance& t : model_tensors(config)) {
    const TensorSpec& spec = *t.spec;
    if (std::holds_alternative<std::monostate>(spec.fills)) continue;
    const GgufTensorInfo* info = file.find_tensor(t.name);
    if (!info && spec.presence == Presence::ElseTokenEmbd && config.tied_output) continue;
    if (!info && spec.presence == Presence::Optional) continue;  // the block does without
    if (!info) throw Error(file.path() + ": missing tensor '" + t.name + "'");
    // A per-expert tensor's rows are expert e's matrix's rows, e * ne1 on (a vector per expert:
    // row e).
    const uint32_t experts = spec.per_expert() ? config.n_experts : 1;
    const int64_t rows = !spec.per_expert() ? int64_t(info->rows()) : spec.is_matrix() ? int64_t(info->ne[1]) : 1;
    for (uint32_t e = 0; e < experts; ++e) {
      TensorSlice s{info, &spec, t.layer, e, e * rows, (e + 1) * rows, 0, int64_t(info->ne[0])};
      if (spec.split.unit != Unit::None) {
        const ElementRange r = unit_elements(config, shard, spec.split.unit, e);
        if (spec.split.axis == Axis::Rows) {
          s.row_begin = e * rows + r.begin;
          s.row_end = e * rows + r.end;
        } else {
          s.col_begin = r.begin;
          s.col_end = r.end;
        }
      }
      const int64_t block = int64_t(ggml_block_elements(info->type));
      if (s.col_begin % block != 0 || s.col_end % block != 0)
        throw Error(file.path() + ": tensor '" + t.name + "' (" + std::string(ggml_type_name(info->type)) +
                    ", blocks of " + std::to_string(block) + ") cannot be split at column " +
                    std::to_string(s.col_begin % block ? s.col_begin : s.col_end) +
                    "; use another rank count");
      slices.push_back(s);
    }
  }
  return slices;
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
  // The experts are the last dimension: ne[2] of a matrix per expert, ne[1] of a vector per expert.
  if (!s.spec->per_expert() || s.expert + 1 == s.tensor->ne.back()) file_.drop_pages(*s.tensor);
}

}  // namespace r1pi
