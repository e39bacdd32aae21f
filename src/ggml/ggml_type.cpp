#include "ggml/ggml_type.h"

#include <array>
#include <stdexcept>
#include <string>

namespace r1pi {

namespace {

struct BlockGeometry {
  size_t elements;
  size_t bytes;
};

BlockGeometry geometry(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return {1, 4};
    case GgmlType::F16: return {1, 2};
    case GgmlType::Q4_0: return {32, 18};
    case GgmlType::Q8_0: return {32, 34};
    case GgmlType::Q6_K: return {256, 210};
  }
  // Only reachable through a cast from an unchecked id: a programming error, not a bad file.
  throw std::invalid_argument("ggml type " + std::to_string(static_cast<uint32_t>(type)) +
                              " is not supported");
}

// ggml's type ids in order; empty entries are ids ggml retired (Q4_2, Q4_3, the repacked
// Q4_0_4_4 family) or never assigned.
constexpr std::array<std::string_view, 40> kGgmlTypeNames = {
    "F32",    "F16",   "Q4_0",  "Q4_1",   "",      "",      "Q5_0",    "Q5_1",   "Q8_0",    "Q8_1",
    "Q2_K",   "Q3_K",  "Q4_K",  "Q5_K",   "Q6_K",  "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
    "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8",    "I16",   "I32",     "I64",    "F64",     "IQ1_M",
    "BF16",   "",      "",      "",       "TQ1_0", "TQ2_0", "",        "",       "",        "MXFP4",
};

}  // namespace

bool ggml_type_supported(uint32_t type_id) {
  switch (static_cast<GgmlType>(type_id)) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::Q4_0:
    case GgmlType::Q8_0:
    case GgmlType::Q6_K: return true;
  }
  return false;
}

std::string_view ggml_type_name(GgmlType type) {
  std::string_view name = ggml_type_id_name(static_cast<uint32_t>(type));
  return name.empty() ? "unknown" : name;
}

std::string_view ggml_type_id_name(uint32_t type_id) {
  return type_id < kGgmlTypeNames.size() ? kGgmlTypeNames[type_id] : std::string_view();
}

size_t ggml_block_elements(GgmlType type) { return geometry(type).elements; }

size_t ggml_block_bytes(GgmlType type) { return geometry(type).bytes; }

size_t ggml_row_bytes(GgmlType type, uint64_t n) {
  BlockGeometry g = geometry(type);
  if (n % g.elements != 0) {
    throw std::invalid_argument("row of " + std::to_string(n) +
                                " elements is not a whole number of " +
                                std::string(ggml_type_name(type)) + " blocks");
  }
  return n / g.elements * g.bytes;
}

}  // namespace r1pi
