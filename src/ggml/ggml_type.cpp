#include "ggml/ggml_type.h"

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/ascii_lower.h"
#include "ggml/fp16.h"
#include "ggml/quant_blocks.h"
#include "ggml/quantize.h"

namespace r1pi {

namespace {

// Row converters with the table's untyped signature.
void copy_f32(const void* x, float* y, int64_t n) { std::memcpy(y, x, size_t(n) * sizeof(float)); }
void copy_to_f32(const float* x, void* y, int64_t n) { std::memcpy(y, x, size_t(n) * sizeof(float)); }
void to_f16(const float* x, void* y, int64_t n) {
  uint16_t* out = static_cast<uint16_t*>(y);
  for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp16(x[i]);
}
template <typename Block, void (*F)(const Block*, float*, int64_t)>
void dequantize_as(const void* x, float* y, int64_t n) { F(static_cast<const Block*>(x), y, n); }
template <typename Block, void (*F)(const float*, Block*, int64_t)>
void quantize_as(const float* x, void* y, int64_t n) { F(x, static_cast<Block*>(y), n); }

// A new type is one row here (and its kernels in src/neon).
constexpr GgmlTypeTraits kTraits[] = {
    {.type = GgmlType::F32, .name = "F32", .block_elements = 1, .block_bytes = 4,
     .holds_matrix = true, .file_type = 0, .dequantize = copy_f32, .quantize = copy_to_f32},
    {.type = GgmlType::F16, .name = "F16", .block_elements = 1, .block_bytes = 2,
     .holds_matrix = true, .file_type = 1, .dequantize = dequantize_as<uint16_t, dequantize_row_f16>,
     .quantize = to_f16},
    {.type = GgmlType::Q4_0, .name = "Q4_0", .block_elements = QK4_0,
     .block_bytes = sizeof(block_q4_0), .holds_matrix = true, .file_type = 2,
     .dequantize = dequantize_as<block_q4_0, dequantize_row_q4_0>,
     .quantize = quantize_as<block_q4_0, quantize_row_q4_0_ref>},
    {.type = GgmlType::Q4_1, .name = "Q4_1", .block_elements = QK4_0,
     .block_bytes = sizeof(block_q4_1), .holds_matrix = true, .file_type = 3,
     .dequantize = dequantize_as<block_q4_1, dequantize_row_q4_1>,
     .quantize = quantize_as<block_q4_1, quantize_row_q4_1_ref>},
    {.type = GgmlType::Q5_0, .name = "Q5_0", .block_elements = QK4_0,
     .block_bytes = sizeof(block_q5_0), .holds_matrix = true, .file_type = 8,
     .dequantize = dequantize_as<block_q5_0, dequantize_row_q5_0>,
     .quantize = quantize_as<block_q5_0, quantize_row_q5_0_ref>},
    {.type = GgmlType::Q5_1, .name = "Q5_1", .block_elements = QK4_0,
     .block_bytes = sizeof(block_q5_1), .holds_matrix = true, .file_type = 9,
     .dequantize = dequantize_as<block_q5_1, dequantize_row_q5_1>,
     .quantize = quantize_as<block_q5_1, quantize_row_q5_1_ref>},
    {.type = GgmlType::Q8_0, .name = "Q8_0", .block_elements = QK8_0,
     .block_bytes = sizeof(block_q8_0), .holds_matrix = true, .file_type = 7,
     .dequantize = dequantize_as<block_q8_0, dequantize_row_q8_0>,
     .quantize = quantize_as<block_q8_0, quantize_row_q8_0_ref>},
    {.type = GgmlType::Q2_K, .name = "Q2_K", .block_elements = QK_K,
     .block_bytes = sizeof(block_q2_K), .holds_matrix = true, .file_type = 10,
     .dequantize = dequantize_as<block_q2_K, dequantize_row_q2_K>,
     .quantize = quantize_as<block_q2_K, quantize_row_q2_K_ref>},
    {.type = GgmlType::Q3_K, .name = "Q3_K", .block_elements = QK_K,
     .block_bytes = sizeof(block_q3_K), .holds_matrix = true, .file_type = 11,  // Q3_K_S
     .dequantize = dequantize_as<block_q3_K, dequantize_row_q3_K>,
     .quantize = quantize_as<block_q3_K, quantize_row_q3_K_ref>},
    {.type = GgmlType::Q4_K, .name = "Q4_K", .block_elements = QK_K,
     .block_bytes = sizeof(block_q4_K), .holds_matrix = true, .file_type = 15,  // Q4_K_M
     .dequantize = dequantize_as<block_q4_K, dequantize_row_q4_K>,
     .quantize = quantize_as<block_q4_K, quantize_row_q4_K_ref>},
    {.type = GgmlType::Q5_K, .name = "Q5_K", .block_elements = QK_K,
     .block_bytes = sizeof(block_q5_K), .holds_matrix = true, .file_type = 17,  // Q5_K_M
     .dequantize = dequantize_as<block_q5_K, dequantize_row_q5_K>,
     .quantize = quantize_as<block_q5_K, quantize_row_q5_K_ref>},
    {.type = GgmlType::Q6_K, .name = "Q6_K", .block_elements = QK_K,
     .block_bytes = sizeof(block_q6_K), .holds_matrix = true, .file_type = 18,
     .dequantize = dequantize_as<block_q6_K, dequantize_row_q6_K>,
     .quantize = quantize_as<block_q6_K, quantize_row_q6_K_ref>},
    {.type = GgmlType::IQ4_NL, .name = "IQ4_NL", .block_elements = QK4_0,
     .block_bytes = sizeof(block_iq4_nl), .holds_matrix = true, .file_type = 25,
     .dequantize = dequantize_as<block_iq4_nl, dequantize_row_iq4_nl>,
     .quantize = quantize_as<block_iq4_nl, quantize_row_iq4_nl_ref>},
    {.type = GgmlType::IQ4_XS, .name = "IQ4_XS", .block_elements = QK_K,
     .block_bytes = sizeof(block_iq4_xs), .holds_matrix = true, .file_type = 30,
     .dequantize = dequantize_as<block_iq4_xs, dequantize_row_iq4_xs>,
     .quantize = quantize_as<block_iq4_xs, quantize_row_iq4_xs_ref>},
    {.type = GgmlType::MXFP4, .name = "MXFP4", .block_elements = QK4_0,
     .block_bytes = sizeof(block_mxfp4), .holds_matrix = true, .file_type = 38,  // MXFP4_MOE
     .dequantize = dequantize_as<block_mxfp4, dequantize_row_mxfp4>,
     .quantize = quantize_as<block_mxfp4, quantize_row_mxfp4_ref>},
    {.type = GgmlType::BF16, .name = "BF16", .block_elements = 1, .block_bytes = 2,
     .holds_matrix = true, .file_type = 32, .dequantize = dequantize_as<uint16_t, dequantize_row_bf16>,
     .quantize = quantize_as<uint16_t, quantize_row_bf16>},
};

const GgmlTypeTraits* find_traits(uint32_t type_id) {
  for (const GgmlTypeTraits& t : kTraits)
    if (static_cast<uint32_t>(t.type) == type_id) return &t;
  return nullptr;
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

const GgmlTypeTraits& ggml_traits(GgmlType type) {
  if (const GgmlTypeTraits* t = find_traits(static_cast<uint32_t>(type))) return *t;
  throw std::invalid_argument("ggml type " + std::to_string(static_cast<uint32_t>(type)) +
                              " is not supported");
}

bool ggml_type_supported(uint32_t type_id) { return find_traits(type_id) != nullptr; }

std::string_view ggml_type_name(GgmlType type) {
  if (const GgmlTypeTraits* t = find_traits(static_cast<uint32_t>(type))) return t->name;
  std::string_view name = ggml_type_id_name(static_cast<uint32_t>(type));
  return name.empty() ? "unknown" : name;
}

std::string_view ggml_type_id_name(uint32_t type_id) {
  return type_id < kGgmlTypeNames.size() ? kGgmlTypeNames[type_id] : std::string_view();
}

std::optional<GgmlType> ggml_matrix_type_named(std::string_view name) {
  for (const GgmlTypeTraits& t : kTraits)
    if (t.holds_matrix && ascii_lower(t.name) == ascii_lower(name)) return t.type;
  return std::nullopt;
}

std::vector<std::string> ggml_matrix_type_names() {
  std::vector<std::string> names;
  for (const GgmlTypeTraits& t : kTraits)
    if (t.holds_matrix) names.push_back(ascii_lower(t.name));
  return names;
}

size_t ggml_block_elements(GgmlType type) { return ggml_traits(type).block_elements; }

size_t ggml_block_bytes(GgmlType type) { return ggml_traits(type).block_bytes; }

size_t ggml_row_bytes(GgmlType type, uint64_t n) {
  const GgmlTypeTraits& t = ggml_traits(type);
  if (n % t.block_elements != 0) {
    throw std::invalid_argument("row of " + std::to_string(n) +
                                " elements is not a whole number of " + std::string(t.name) +
                                " blocks");
  }
  return n / t.block_elements * t.block_bytes;
}

}  // namespace r1pi
