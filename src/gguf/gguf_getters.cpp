// GgufFile's typed metadata getters: one place that decides which stored types each accepts.
#include <cstdint>
#include <limits>

#include "common/error.h"
#include "gguf/gguf_file.h"

namespace r1pi {

namespace {

[[noreturn]] void fail_key(const std::string& path, std::string_view key,
                           const std::string& problem) {
  throw Error(path + ": metadata key '" + std::string(key) + "' " + problem);
}

[[noreturn]] void wrong_type(const std::string& path, std::string_view key, const GgufValue& value,
                             const char* expected) {
  std::string stored(gguf_value_type_name(value.type));
  if (value.type == GgufValueType::ARRAY) {
    stored += " of " + std::string(gguf_value_type_name(value.array_type));
  }
  fail_key(path, key, "has type " + stored + ", expected " + expected);
}

[[noreturn]] void out_of_range(const std::string& path, std::string_view key,
                               const GgufValue& value, const char* target) {
  fail_key(path, key, "value " + value.to_display_string() + " does not fit " + target);
}

bool is_unsigned(GgufValueType type) {
  return type == GgufValueType::UINT8 || type == GgufValueType::UINT16 ||
         type == GgufValueType::UINT32 || type == GgufValueType::UINT64;
}

// Integer conversions that refuse values outside the target range rather than wrapping.
uint64_t to_u64(const std::string& path, std::string_view key, const GgufValue& value) {
  if (!value.is_integer()) wrong_type(path, key, value, "an integer");
  if (is_unsigned(value.type)) return value.u;
  if (value.i < 0) out_of_range(path, key, value, "an unsigned integer");
  return static_cast<uint64_t>(value.i);
}

int64_t to_i64(const std::string& path, std::string_view key, const GgufValue& value) {
  if (!value.is_integer()) wrong_type(path, key, value, "an integer");
  if (!is_unsigned(value.type)) return value.i;
  if (value.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    out_of_range(path, key, value, "int64");
  }
  return static_cast<int64_t>(value.u);
}

float to_f32(const std::string& path, std::string_view key, const GgufValue& value) {
  if (!value.is_float()) wrong_type(path, key, value, "FLOAT32 or FLOAT64");
  return static_cast<float>(value.f);
}

void require_array(const std::string& path, std::string_view key, const GgufValue& value,
                   bool (*element_ok)(GgufValueType), const char* expected) {
  if (value.type != GgufValueType::ARRAY || !element_ok(value.array_type)) {
    wrong_type(path, key, value, expected);
  }
}

}  // namespace

std::string GgufFile::get_string(std::string_view key) const {
  if (auto v = try_string(key)) return *v;
  fail_key(path_, key, "is missing");
}

uint64_t GgufFile::get_u64(std::string_view key) const {
  if (auto v = try_u64(key)) return *v;
  fail_key(path_, key, "is missing");
}

uint32_t GgufFile::get_u32(std::string_view key) const {
  uint64_t v = get_u64(key);
  if (v > std::numeric_limits<uint32_t>::max()) out_of_range(path_, key, *find(key), "uint32");
  return static_cast<uint32_t>(v);
}

int64_t GgufFile::get_i64(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) fail_key(path_, key, "is missing");
  return to_i64(path_, key, *value);
}

float GgufFile::get_f32(std::string_view key) const {
  if (auto v = try_f32(key)) return *v;
  fail_key(path_, key, "is missing");
}

bool GgufFile::get_bool(std::string_view key) const {
  if (auto v = try_bool(key)) return *v;
  fail_key(path_, key, "is missing");
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) fail_key(path_, key, "is missing");
  require_array(
      path_, key, *value, [](GgufValueType t) { return t == GgufValueType::STRING; },
      "ARRAY of STRING");
  std::vector<std::string> out;
  out.reserve(value->array.size());
  for (const GgufValue& item : value->array) out.push_back(item.s);
  return out;
}

std::vector<float> GgufFile::get_f32_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) fail_key(path_, key, "is missing");
  require_array(
      path_, key, *value,
      [](GgufValueType t) { return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64; },
      "ARRAY of FLOAT32 or FLOAT64");
  std::vector<float> out;
  out.reserve(value->array.size());
  for (const GgufValue& item : value->array) out.push_back(static_cast<float>(item.f));
  return out;
}

std::vector<int32_t> GgufFile::get_i32_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) fail_key(path_, key, "is missing");
  require_array(
      path_, key, *value,
      [](GgufValueType t) {
        GgufValue element;
        element.type = t;
        return element.is_integer();
      },
      "ARRAY of integers");
  std::vector<int32_t> out;
  out.reserve(value->array.size());
  for (const GgufValue& item : value->array) {
    int64_t v = to_i64(path_, key, item);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      out_of_range(path_, key, item, "int32");
    }
    out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

std::optional<std::string> GgufFile::try_string(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (value->type != GgufValueType::STRING) wrong_type(path_, key, *value, "STRING");
  return value->s;
}

std::optional<uint64_t> GgufFile::try_u64(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  return to_u64(path_, key, *value);
}

std::optional<float> GgufFile::try_f32(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  return to_f32(path_, key, *value);
}

std::optional<bool> GgufFile::try_bool(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (value->type != GgufValueType::BOOL) wrong_type(path_, key, *value, "BOOL");
  return value->u != 0;
}

}  // namespace r1pi
