// A bounds-checked cursor over the mapped GGUF bytes. Every read checks the bytes left first, so
// no malformed length or count can make the parser touch memory past the mapping. Failures throw
// r1pi::Error "<path>: <problem>"; the context (the part being parsed) names where a truncation
// hit.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/error.h"

namespace r1pi {

class GgufByteReader {
 public:
  GgufByteReader(const uint8_t* data, size_t size, std::string path)
      : data_(data), size_(size), path_(std::move(path)) {}

  size_t position() const { return position_; }
  size_t remaining() const { return size_ - position_; }
  const std::string& path() const { return path_; }

  // What is being parsed ("metadata key 'general.name'"), for messages about it.
  void set_context(std::string context) { context_ = std::move(context); }
  const std::string& context() const { return context_; }

  template <typename T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }

  // A GGUF string: u64 byte length, then the bytes (no terminator).
  std::string read_string() {
    uint64_t length = read<uint64_t>();
    if (length > remaining()) {
      fail(context_ + " has a string length of " + std::to_string(length) + ", more than the " +
           std::to_string(remaining()) + " bytes left in the file");
    }
    const uint8_t* bytes = take(static_cast<size_t>(length));
    return std::string(reinterpret_cast<const char*>(bytes), static_cast<size_t>(length));
  }

  [[noreturn]] void fail(const std::string& problem) const { throw Error(path_ + ": " + problem); }

  // The header's counts, named when reading what they count fails (fail_in_count).
  void set_counts(uint64_t n_metadata, uint64_t n_tensors) {
    counts_ = "the header counts " + std::to_string(n_metadata) + " metadata entries and " +
              std::to_string(n_tensors) + " tensors";
  }

  // Rethrows e, a failure while reading item n, with the header's counts named: a count that
  // disagrees with the file makes the parser read the bytes after it as something else, and the
  // symptom alone ("tensor '' has 0 dimensions") hides the cause.
  [[noreturn]] void fail_in_count(const Error& e, const char* item, uint64_t n) const {
    throw Error(std::string(e.what()) + " (in " + item + " " + std::to_string(n) + "; " + counts_ +
                ", and a wrong count misreads what follows it)");
  }

 private:
  const uint8_t* take(size_t n) {
    if (n > remaining()) {
      fail("file is truncated in " + context_ + " (needs " + std::to_string(n) +
           " bytes at offset " + std::to_string(position_) + ", the file has " +
           std::to_string(size_) + ")");
    }
    const uint8_t* at = data_ + position_;
    position_ += n;
    return at;
  }

  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
  std::string path_;
  std::string context_ = "the header";
  std::string counts_;
};

}  // namespace r1pi
