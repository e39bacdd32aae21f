// The tensor element types r1pi reads and writes, with ggml's numbering and block geometry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace r1pi {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q8_0 = 8,
  Q6_K = 14,
};

// True for the types above; any other ggml type id is refused by the reader.
bool ggml_type_supported(uint32_t type_id);
std::string_view ggml_type_name(GgmlType type);
// ggml's name for any type id, supported or not ("Q4_K" for 12), so that a refusal can say what
// the file holds; "" for ids ggml never assigned.
std::string_view ggml_type_id_name(uint32_t type_id);
// Elements per block (1 for F32/F16, 32 for Q4_0/Q8_0, 256 for Q6_K) and bytes per block.
size_t ggml_block_elements(GgmlType type);
size_t ggml_block_bytes(GgmlType type);
// Bytes of a row of n elements; n must be a multiple of the block size.
size_t ggml_row_bytes(GgmlType type, uint64_t n);

}  // namespace r1pi
