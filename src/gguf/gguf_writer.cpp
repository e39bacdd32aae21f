#include "gguf/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "gguf/gguf_format.h"

namespace r1pi {

namespace {

constexpr size_t kStdioBufferBytes = size_t{4} << 20;

[[noreturn]] void fail(const std::string& who, const std::string& problem) {
  throw Error(who + ": " + problem);
}

// Before open() there is no path to name yet.
constexpr const char* kNoPath = "GGUF writer";

// Whether an integer or boolean value lies in its type's range; other types always fit.
bool in_range(const GgufValue& value) {
  switch (value.type) {
    case GgufValueType::UINT8: return value.u <= UINT8_MAX;
    case GgufValueType::UINT16: return value.u <= UINT16_MAX;
    case GgufValueType::UINT32: return value.u <= UINT32_MAX;
    case GgufValueType::BOOL: return value.u <= 1;
    case GgufValueType::INT8: return value.i >= INT8_MIN && value.i <= INT8_MAX;
    case GgufValueType::INT16: return value.i >= INT16_MIN && value.i <= INT16_MAX;
    case GgufValueType::INT32: return value.i >= INT32_MIN && value.i <= INT32_MAX;
    default: return true;
  }
}

// Refuses values the file could not represent faithfully: unknown types, integers that do not
// fit their type, booleans other than 0/1, array elements of another type than the array's.
void check_value(const GgufValue& value, const std::string& key) {
  auto bad = [&](const std::string& problem) {
    fail(kNoPath, "metadata key '" + key + "' " + problem);
  };
  if (!gguf_format::is_known_type(static_cast<uint32_t>(value.type))) bad("has an unknown type");
  if (!in_range(value)) bad("has a value out of range for its type");
  if (value.type != GgufValueType::ARRAY) return;
  if (!gguf_format::is_known_type(static_cast<uint32_t>(value.array_type))) {
    bad("has an unknown array element type");
  }
  for (const GgufValue& item : value.array) {
    if (item.type != value.array_type) bad("mixes element types in one array");
    check_value(item, key);
  }
}

// The part of the file before the tensor data is built in memory (it is small: a vocabulary is a
// few MB) and then written in one go.
class Encoder {
 public:
  std::vector<uint8_t> bytes;

  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
  }

  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }

  void put_payload(const GgufValue& value) {
    switch (value.type) {
      case GgufValueType::UINT8: put<uint8_t>(static_cast<uint8_t>(value.u)); break;
      case GgufValueType::UINT16: put<uint16_t>(static_cast<uint16_t>(value.u)); break;
      case GgufValueType::UINT32: put<uint32_t>(static_cast<uint32_t>(value.u)); break;
      case GgufValueType::UINT64: put<uint64_t>(value.u); break;
      case GgufValueType::BOOL: put<uint8_t>(static_cast<uint8_t>(value.u)); break;
      case GgufValueType::INT8: put<int8_t>(static_cast<int8_t>(value.i)); break;
      case GgufValueType::INT16: put<int16_t>(static_cast<int16_t>(value.i)); break;
      case GgufValueType::INT32: put<int32_t>(static_cast<int32_t>(value.i)); break;
      case GgufValueType::INT64: put<int64_t>(value.i); break;
      case GgufValueType::FLOAT32: put<float>(static_cast<float>(value.f)); break;
      case GgufValueType::FLOAT64: put<double>(value.f); break;
      case GgufValueType::STRING: put_string(value.s); break;
      case GgufValueType::ARRAY:
        put<uint32_t>(static_cast<uint32_t>(value.array_type));
        put<uint64_t>(value.array.size());
        for (const GgufValue& item : value.array) put_payload(item);
        break;
    }
  }

  void put_key_value(const std::string& key, const GgufValue& value) {
    put_string(key);
    put<uint32_t>(static_cast<uint32_t>(value.type));
    put_payload(value);
  }
};

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (!gguf_format::is_power_of_two(alignment)) {
    fail(kNoPath, "alignment " + std::to_string(alignment) + " is not a power of two");
  }
}

// out_ removes an uncommitted temporary; closed here, before buffer_ (its stream's buffer) goes.
GgufWriter::~GgufWriter() { out_.reset(); }

void GgufWriter::add(std::string key, GgufValue value) {
  if (!path_.empty()) fail(path_, "metadata key '" + key + "' added after open()");
  if (key == gguf_format::kAlignmentKey) {
    fail(kNoPath, key + " is written from the GgufWriter constructor's alignment, not add()");
  }
  for (const auto& [existing, unused] : metadata_) {
    if (existing == key) fail(kNoPath, "duplicate metadata key '" + key + "'");
  }
  check_value(value, key);
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> ne, GgmlType type) {
  auto bad = [&](const std::string& problem) { fail(kNoPath, "tensor '" + name + "' " + problem); };
  if (!path_.empty()) fail(path_, "tensor '" + name + "' added after open()");
  if (!ggml_type_supported(static_cast<uint32_t>(type))) bad("has an unsupported type");
  if (ne.empty() || ne.size() > gguf_format::kMaxDims) bad("must have 1 to 4 dimensions");
  uint64_t n_elements = 1;
  for (uint64_t n : ne) {
    if (n == 0) bad("has a zero dimension");
    if (__builtin_mul_overflow(n_elements, n, &n_elements)) bad("has too many elements");
  }
  if (ne[0] % ggml_block_elements(type) != 0) bad("has rows that are not a whole number of blocks");
  for (const Pending& t : tensors_) {
    if (t.name == name) bad("is declared twice");
  }
  uint64_t n_bytes;
  if (__builtin_mul_overflow(n_elements / ggml_block_elements(type),
                             uint64_t{ggml_block_bytes(type)}, &n_bytes)) {
    bad("has too many bytes");
  }
  uint64_t offset =
      tensors_.empty()
          ? 0
          : gguf_format::align_up(tensors_.back().offset + tensors_.back().n_bytes, alignment_);
  tensors_.push_back({std::move(name), std::move(ne), type, n_bytes, offset});
}

void GgufWriter::open(const std::string& path) {
  if (!path_.empty()) fail(path_, "open() called twice");
  path_ = path;
  try {
    out_.emplace(path);
  } catch (const WriteError& e) {
    fail(path, std::string("cannot create: ") + std::strerror(e.error_number));
  }
  file_ = out_->stream();
  buffer_.resize(kStdioBufferBytes);
  std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());

  bool custom_alignment = alignment_ != gguf_format::kDefaultAlignment;
  Encoder out;
  // Room for a small header at once (GCC 12 also warns of a false overflow when the first insert
  // allocates exactly the magic's 4 bytes).
  out.bytes.reserve(4096);
  out.bytes.insert(out.bytes.end(), std::begin(gguf_format::kMagic), std::end(gguf_format::kMagic));
  out.put<uint32_t>(gguf_format::kWriteVersion);
  out.put<uint64_t>(tensors_.size());
  out.put<uint64_t>(metadata_.size() + (custom_alignment ? 1 : 0));
  for (const auto& [key, value] : metadata_) out.put_key_value(key, value);
  if (custom_alignment) out.put_key_value(gguf_format::kAlignmentKey, GgufValue::u32(alignment_));
  for (const Pending& t : tensors_) {
    out.put_string(t.name);
    out.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t n : t.ne) out.put<uint64_t>(n);
    out.put<uint32_t>(static_cast<uint32_t>(t.type));
    out.put<uint64_t>(t.offset);
  }
  write_raw(out.bytes.data(), out.bytes.size());
  pad_to_alignment();
}

void GgufWriter::write_data(const void* data, size_t n) {
  if (!file_) fail(path_.empty() ? kNoPath : path_, "write_data() outside open() .. close()");
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (n > 0) {
    if (current_ == tensors_.size()) {
      fail(path_, "more tensor data written than the tensors declare");
    }
    const Pending& tensor = tensors_[current_];
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, tensor.n_bytes - current_filled_));
    write_raw(bytes, take);
    bytes += take;
    n -= take;
    current_filled_ += take;
    if (current_filled_ == tensor.n_bytes) {
      // Every tensor, the last included, is followed by padding, as ggml writes them.
      pad_to_alignment();
      ++current_;
      current_filled_ = 0;
    }
  }
}

void GgufWriter::close() {
  if (!file_) fail(path_.empty() ? kNoPath : path_, "close() without open()");
  if (current_ < tensors_.size()) {
    const Pending& tensor = tensors_[current_];
    std::string problem = "tensor '" + tensor.name + "' got " + std::to_string(current_filled_) +
                          " of its " + std::to_string(tensor.n_bytes) +
                          " bytes; the incomplete file was removed";
    out_->discard();
    file_ = nullptr;
    fail(path_, problem);
  }
  file_ = nullptr;
  try {
    out_->commit();
  } catch (const WriteError& e) {
    fail(path_, std::string("write failed: ") + std::strerror(e.error_number));
  }
}

void GgufWriter::pad_to_alignment() {
  static constexpr uint8_t kZeros[4096] = {};
  while (position_ % alignment_ != 0) {
    uint64_t missing = alignment_ - position_ % alignment_;
    write_raw(kZeros, static_cast<size_t>(std::min<uint64_t>(missing, sizeof kZeros)));
  }
}

void GgufWriter::write_raw(const void* data, size_t n) {
  if (std::fwrite(data, 1, n, file_) != n) {
    fail(path_, std::string("write failed: ") + std::strerror(errno));
  }
  position_ += n;
}

}  // namespace r1pi
