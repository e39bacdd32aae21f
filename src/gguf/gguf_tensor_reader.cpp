#include "gguf/gguf_tensor_reader.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_set>

#include "gguf/gguf_format.h"

namespace r1pi {

namespace {

std::string describe_type(uint32_t type_id) {
  std::string_view name = ggml_type_id_name(type_id);
  return std::to_string(type_id) + (name.empty() ? "" : " (" + std::string(name) + ")");
}

GgufTensorInfo read_tensor_info(GgufByteReader& reader, uint64_t alignment) {
  GgufTensorInfo tensor;
  tensor.name = reader.read_string();
  reader.set_context("tensor '" + tensor.name + "'");

  uint32_t n_dims = reader.read<uint32_t>();
  if (n_dims < 1 || n_dims > gguf_format::kMaxDims) {
    reader.fail(reader.context() + " has " + std::to_string(n_dims) + " dimensions (1 to " +
                std::to_string(gguf_format::kMaxDims) + " allowed)");
  }
  tensor.ne.resize(n_dims);
  tensor.n_elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    tensor.ne[d] = reader.read<uint64_t>();
    if (tensor.ne[d] == 0) {
      reader.fail(reader.context() + " has dimension " + std::to_string(d) + " equal to 0");
    }
    // ggml keeps dimensions in int64_t, so the count must stay below 2^63 as well as not wrap.
    if (__builtin_mul_overflow(tensor.n_elements, tensor.ne[d], &tensor.n_elements) ||
        tensor.n_elements > static_cast<uint64_t>(INT64_MAX)) {
      reader.fail(reader.context() + " has an element count that overflows");
    }
  }

  uint32_t type_id = reader.read<uint32_t>();
  if (!ggml_type_supported(type_id)) {
    reader.fail(reader.context() + " has unsupported type " + describe_type(type_id));
  }
  tensor.type = static_cast<GgmlType>(type_id);

  uint64_t block = ggml_block_elements(tensor.type);
  if (tensor.ne[0] % block != 0) {
    reader.fail(reader.context() + " has row length " + std::to_string(tensor.ne[0]) +
                ", not a multiple of the " + std::string(ggml_type_name(tensor.type)) +
                " block size " + std::to_string(block));
  }
  if (__builtin_mul_overflow(tensor.n_elements / block, uint64_t{ggml_block_bytes(tensor.type)},
                             &tensor.n_bytes)) {
    reader.fail(reader.context() + " has a byte size that overflows");
  }

  tensor.offset = reader.read<uint64_t>();
  if (tensor.offset % alignment != 0) {
    reader.fail(reader.context() + " has offset " + std::to_string(tensor.offset) +
                ", not a multiple of the alignment " + std::to_string(alignment));
  }
  return tensor;
}

}  // namespace

std::vector<GgufTensorInfo> read_gguf_tensor_infos(GgufByteReader& reader, uint64_t count,
                                                   uint64_t alignment) {
  if (count > reader.remaining() / gguf_format::kMinTensorInfoBytes) {
    reader.fail("the header claims " + std::to_string(count) +
                " tensors, more than the file could hold");
  }
  std::vector<GgufTensorInfo> tensors;
  tensors.reserve(static_cast<size_t>(count));
  std::unordered_set<std::string> names;
  for (uint64_t n = 0; n < count; ++n) {
    reader.set_context("tensor info " + std::to_string(n));
    GgufTensorInfo tensor;
    try {
      tensor = read_tensor_info(reader, alignment);
    } catch (const Error& e) {
      reader.fail_in_count(e, "tensor info", n);
    }
    if (!names.insert(tensor.name).second) {
      reader.fail("duplicate tensor name '" + tensor.name + "'");
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

void check_gguf_tensor_layout(const std::vector<GgufTensorInfo>& tensors, uint64_t data_offset,
                              uint64_t file_size, GgufByteReader& reader) {
  uint64_t data_size = data_offset <= file_size ? file_size - data_offset : 0;
  for (const GgufTensorInfo& tensor : tensors) {
    // Written as subtractions so that a huge offset cannot wrap around into range.
    if (tensor.offset > data_size || tensor.n_bytes > data_size - tensor.offset) {
      reader.fail("tensor '" + tensor.name + "' (" + std::to_string(tensor.n_bytes) +
                  " bytes at data offset " + std::to_string(tensor.offset) +
                  ") extends past the end of the file (the data section holds " +
                  std::to_string(data_size) + " bytes)");
    }
  }
  // All ends are now inside the file, so offset + n_bytes cannot overflow below.
  std::vector<size_t> by_offset(tensors.size());
  std::iota(by_offset.begin(), by_offset.end(), size_t{0});
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const GgufTensorInfo& before = tensors[by_offset[k - 1]];
    const GgufTensorInfo& after = tensors[by_offset[k]];
    if (before.offset + before.n_bytes > after.offset) {
      reader.fail("tensors '" + before.name + "' and '" + after.name + "' overlap");
    }
  }
}

}  // namespace r1pi
