#include "gguf/gguf_metadata_reader.h"

#include <unordered_set>

#include "gguf/gguf_format.h"

namespace r1pi {

namespace {

// Real files nest at most one level (arrays of arrays of strings); the limit keeps a hostile
// file from recursing the parser off the stack.
constexpr int kMaxArrayDepth = 16;
// A GgufValue is ~100 bytes while a UINT8 element is 1 byte in the file, so the file size alone
// does not bound memory. The largest real metadata (256k-token vocabularies with scores, types
// and merges) holds about a million values; 16M leaves room while capping memory near 2 GB.
constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 24;

class MetadataParser {
 public:
  explicit MetadataParser(GgufByteReader& reader) : reader_(reader) {}

  GgufValueType read_type(const char* what) {
    uint32_t id = reader_.read<uint32_t>();
    if (!gguf_format::is_known_type(id)) {
      reader_.fail(reader_.context() + " has unknown " + what + " " + std::to_string(id));
    }
    return static_cast<GgufValueType>(id);
  }

  GgufValue read_value(GgufValueType type, int depth) {
    GgufValue value;
    value.type = type;
    switch (type) {
      case GgufValueType::UINT8: value.u = reader_.read<uint8_t>(); break;
      case GgufValueType::UINT16: value.u = reader_.read<uint16_t>(); break;
      case GgufValueType::UINT32: value.u = reader_.read<uint32_t>(); break;
      case GgufValueType::UINT64: value.u = reader_.read<uint64_t>(); break;
      case GgufValueType::INT8: value.i = reader_.read<int8_t>(); break;
      case GgufValueType::INT16: value.i = reader_.read<int16_t>(); break;
      case GgufValueType::INT32: value.i = reader_.read<int32_t>(); break;
      case GgufValueType::INT64: value.i = reader_.read<int64_t>(); break;
      case GgufValueType::FLOAT32: value.f = reader_.read<float>(); break;
      case GgufValueType::FLOAT64: value.f = reader_.read<double>(); break;
      case GgufValueType::BOOL: value.u = read_bool(); break;
      case GgufValueType::STRING: value.s = reader_.read_string(); break;
      case GgufValueType::ARRAY: read_array(value, depth); break;
    }
    return value;
  }

 private:
  uint8_t read_bool() {
    uint8_t byte = reader_.read<uint8_t>();
    if (byte > 1) {
      reader_.fail(reader_.context() + " has boolean byte " + std::to_string(byte) +
                   " (must be 0 or 1)");
    }
    return byte;
  }

  void read_array(GgufValue& value, int depth) {
    if (depth >= kMaxArrayDepth) {
      reader_.fail(reader_.context() + " has arrays nested more than " +
                   std::to_string(kMaxArrayDepth) + " levels deep");
    }
    value.array_type = read_type("array element type");
    uint64_t count = reader_.read<uint64_t>();
    // Checked before allocating: a count the remaining bytes cannot hold fails here, at once.
    if (count > reader_.remaining() / gguf_format::min_encoded_size(value.array_type)) {
      reader_.fail(reader_.context() + " has an array of " + std::to_string(count) + " " +
                   std::string(gguf_value_type_name(value.array_type)) + " values, more than the " +
                   std::to_string(reader_.remaining()) + " bytes left in the file can hold");
    }
    total_values_ += count;
    if (total_values_ > kMaxMetadataValues) {
      reader_.fail("metadata holds more than " + std::to_string(kMaxMetadataValues) + " values");
    }
    value.array.reserve(static_cast<size_t>(count));
    for (uint64_t k = 0; k < count; ++k) {
      value.array.push_back(read_value(value.array_type, depth + 1));
    }
  }

  GgufByteReader& reader_;
  uint64_t total_values_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, GgufValue>> read_gguf_metadata(GgufByteReader& reader,
                                                                  uint64_t count) {
  if (count > reader.remaining() / gguf_format::kMinKeyValueBytes) {
    reader.fail("the header claims " + std::to_string(count) +
                " metadata entries, more than the file could hold");
  }
  MetadataParser parser(reader);
  std::vector<std::pair<std::string, GgufValue>> metadata;
  metadata.reserve(static_cast<size_t>(count));
  std::unordered_set<std::string> seen;
  for (uint64_t n = 0; n < count; ++n) {
    reader.set_context("metadata entry " + std::to_string(n));
    try {
      std::string key = reader.read_string();
      reader.set_context("metadata key '" + key + "'");
      if (!seen.insert(key).second) reader.fail("duplicate metadata key '" + key + "'");
      GgufValueType type = parser.read_type("value type");
      metadata.emplace_back(std::move(key), parser.read_value(type, 0));
    } catch (const Error& e) {
      reader.fail_in_count(e, "metadata entry", n);
    }
  }
  return metadata;
}

}  // namespace r1pi
