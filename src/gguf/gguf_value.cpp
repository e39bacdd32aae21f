#include "gguf/gguf_value.h"

#include "common/json_string.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace r1pi {

GgufValue GgufValue::u32(uint32_t v) { return {.type = GgufValueType::UINT32, .u = v}; }
GgufValue GgufValue::i32(int32_t v) { return {.type = GgufValueType::INT32, .i = v}; }
GgufValue GgufValue::u64(uint64_t v) { return {.type = GgufValueType::UINT64, .u = v}; }
GgufValue GgufValue::f32(float v) { return {.type = GgufValueType::FLOAT32, .f = v}; }
GgufValue GgufValue::boolean(bool v) { return {.type = GgufValueType::BOOL, .u = v ? 1u : 0u}; }

GgufValue GgufValue::string(std::string v) {
  return {.type = GgufValueType::STRING, .s = std::move(v)};
}

namespace {

template <typename T, typename Make>
GgufValue make_array(GgufValueType element_type, const std::vector<T>& items, Make make) {
  GgufValue value;
  value.type = GgufValueType::ARRAY;
  value.array_type = element_type;
  value.array.reserve(items.size());
  for (const T& item : items) value.array.push_back(make(item));
  return value;
}

// Shortest text that reads back as the same number, in plain notation for everyday magnitudes
// (500000 rather than 5e+05) and in scientific notation beyond them (1e-05 rather than 0.00001).
template <typename T>
std::string shortest(T v) {
  char buf[400];  // enough for any double in fixed notation
  T magnitude = std::abs(v);
  bool everyday = v == 0 || (magnitude >= T(1e-4) && magnitude < T(1e15));
  auto result = everyday ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

}  // namespace

GgufValue GgufValue::string_array(const std::vector<std::string>& v) {
  return make_array(GgufValueType::STRING, v, [](const std::string& s) { return string(s); });
}

GgufValue GgufValue::f32_array(const std::vector<float>& v) {
  return make_array(GgufValueType::FLOAT32, v, [](float x) { return f32(x); });
}

GgufValue GgufValue::i32_array(const std::vector<int32_t>& v) {
  return make_array(GgufValueType::INT32, v, [](int32_t x) { return i32(x); });
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::UINT64:
    case GgufValueType::INT64: return true;
    default: return false;
  }
}

bool GgufValue::is_float() const {
  return type == GgufValueType::FLOAT32 || type == GgufValueType::FLOAT64;
}

std::string GgufValue::to_display_string(size_t max_items) const {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::UINT16:
    case GgufValueType::UINT32:
    case GgufValueType::UINT64: return std::to_string(u);
    case GgufValueType::INT8:
    case GgufValueType::INT16:
    case GgufValueType::INT32:
    case GgufValueType::INT64: return std::to_string(i);
    case GgufValueType::FLOAT32: return shortest(static_cast<float>(f));
    case GgufValueType::FLOAT64: return shortest(f);
    case GgufValueType::BOOL: return u ? "true" : "false";
    case GgufValueType::STRING: {
      // Quoted, with control characters escaped so that a token like "\n" stays on one line.
      std::string out;
      append_json_string(out, s);
      return out;
    }
    case GgufValueType::ARRAY: {
      std::string out = "[";
      size_t shown = std::min(array.size(), max_items);
      for (size_t k = 0; k < shown; ++k) {
        if (k) out += ", ";
        out += array[k].to_display_string(max_items);
      }
      if (shown < array.size()) {
        out += shown ? ", ... (" : "... (";
        out += std::to_string(array.size()) + " items)";
      }
      return out + "]";
    }
  }
  return "<unknown type " + std::to_string(static_cast<uint32_t>(type)) + ">";
}

std::string_view gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8: return "UINT8";
    case GgufValueType::INT8: return "INT8";
    case GgufValueType::UINT16: return "UINT16";
    case GgufValueType::INT16: return "INT16";
    case GgufValueType::UINT32: return "UINT32";
    case GgufValueType::INT32: return "INT32";
    case GgufValueType::FLOAT32: return "FLOAT32";
    case GgufValueType::BOOL: return "BOOL";
    case GgufValueType::STRING: return "STRING";
    case GgufValueType::ARRAY: return "ARRAY";
    case GgufValueType::UINT64: return "UINT64";
    case GgufValueType::INT64: return "INT64";
    case GgufValueType::FLOAT64: return "FLOAT64";
  }
  return "unknown";
}

}  // namespace r1pi
