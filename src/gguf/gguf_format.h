// Facts about the GGUF encoding shared by the reader and the writer.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "gguf/gguf_value.h"

namespace r1pi::gguf_format {

static_assert(std::endian::native == std::endian::little,
              "GGUF is read and written by copying little-endian integers");

constexpr uint8_t kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr uint32_t kWriteVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;
constexpr const char* kAlignmentKey = "general.alignment";
constexpr uint32_t kMaxDims = 4;

constexpr bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

constexpr uint64_t align_up(uint64_t v, uint64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}

// Bytes of a fixed-size value's payload, 0 for STRING and ARRAY and for ids that are no type.
constexpr size_t fixed_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64: return 8;
    case GgufValueType::STRING:
    case GgufValueType::ARRAY: return 0;
  }
  return 0;
}

constexpr bool is_known_type(uint32_t type_id) {
  return type_id <= static_cast<uint32_t>(GgufValueType::FLOAT64);
}

// The fewest bytes an encoded value of a type can take (an empty string is its u64 length, an
// empty array its element type and count). Used to refuse counts the file cannot possibly hold.
constexpr size_t min_encoded_size(GgufValueType type) {
  if (type == GgufValueType::STRING) return 8;
  if (type == GgufValueType::ARRAY) return 4 + 8;
  return fixed_size(type);
}

// Smallest metadata entry: empty key (u64 length), value type, one-byte value.
constexpr size_t kMinKeyValueBytes = 8 + 4 + 1;
// Smallest tensor info: empty name, n_dims, one dimension, type, offset.
constexpr size_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

}  // namespace r1pi::gguf_format
