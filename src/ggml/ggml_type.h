// The tensor element types r1pi reads and writes, with ggml's numbering, and one trait row per
// type (ggml's type_traits): its block geometry, how a row converts to and from floats, and
// whether it may hold a matrix. The kernels of each type are a second table, in src/neon
// (neon/kernels.h), as ggml keeps its CPU traits apart from the format.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r1pi {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
  MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;
  size_t block_elements;  // elements per block (1 for the float types)
  size_t block_bytes;
  bool holds_matrix;      // the kernels multiply matrices stored in it
  uint32_t file_type;     // general.file_type (llama.cpp's llama_ftype) of a file mostly of it
  // n elements (a multiple of block_elements) to floats and back; quantise is ggml's reference.
  void (*dequantize)(const void* x, float* y, int64_t n);
  void (*quantize)(const float* x, void* y, int64_t n);
};

// The row of a type; only for the types above (an unchecked cast is a programming error).
const GgmlTypeTraits& ggml_traits(GgmlType type);
// True for the types above; any other ggml type id is refused by the reader.
bool ggml_type_supported(uint32_t type_id);
std::string_view ggml_type_name(GgmlType type);
// ggml's name for any type id, supported or not ("Q4_K" for 12), so that a refusal can say what
// the file holds; "" for ids ggml never assigned.
std::string_view ggml_type_id_name(uint32_t type_id);
// The type a matrix may be stored in, by its name in any case ("q6_k"), from the trait rows; nothing
// for another name. ggml_matrix_type_names(): those names, lower case, for help and messages.
std::optional<GgmlType> ggml_matrix_type_named(std::string_view name);
std::vector<std::string> ggml_matrix_type_names();
size_t ggml_block_elements(GgmlType type);
size_t ggml_block_bytes(GgmlType type);
// Bytes of a row of n elements; n must be a multiple of the block size.
size_t ggml_row_bytes(GgmlType type, uint64_t n);

}  // namespace r1pi
