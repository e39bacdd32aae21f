// A GGUF metadata value: a scalar, a string or a (possibly nested) array of them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

enum class GgufValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

struct GgufValue {
  GgufValueType type = GgufValueType::UINT32;
  // Exactly one of these holds the value, chosen by type: unsigned integers (and BOOL as 0/1) in u,
  // signed integers in i, FLOAT32/FLOAT64 in f, STRING in s, ARRAY in array (element type array_type).
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s{};
  GgufValueType array_type = GgufValueType::UINT8;
  std::vector<GgufValue> array{};

  static GgufValue u32(uint32_t v);
  static GgufValue i32(int32_t v);
  static GgufValue u64(uint64_t v);
  static GgufValue f32(float v);
  static GgufValue boolean(bool v);
  static GgufValue string(std::string v);
  static GgufValue string_array(const std::vector<std::string>& v);
  static GgufValue f32_array(const std::vector<float>& v);
  static GgufValue i32_array(const std::vector<int32_t>& v);

  bool is_integer() const;  // any of the eight integer types
  bool is_float() const;    // FLOAT32 or FLOAT64
  // Human-readable rendering for `r1pi-model info` (long arrays abbreviated).
  std::string to_display_string(size_t max_items = 8) const;
};

std::string_view gguf_value_type_name(GgufValueType type);

}  // namespace r1pi
