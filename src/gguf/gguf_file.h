// Reads a GGUF file (v2 or v3) through mmap, after validating all of it.
//
// open() checks, before anything is used: magic, version, metadata and tensor counts against the
// file size, every string and array length against the bytes left, known value and tensor types,
// general.alignment (power of two), tensor dimensions (1..4, non-zero, no overflow, rows a whole
// number of blocks), tensor offsets aligned, inside the data section and not overlapping each other.
// A bad file raises r1pi::Error whose message starts with the path and names the problem; nothing
// ever reads past the mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggml/ggml_type.h"
#include "gguf/gguf_value.h"

namespace r1pi {

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order: ne[0] is the row length (contiguous), ne[1] the rows
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;       // from the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;

  uint64_t rows() const;     // product of ne[1..]
};

class GgufFile {
 public:
  // Maps and validates the file; throws r1pi::Error ("<path>: <problem>").
  static GgufFile open(const std::string& path);
  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;
  ~GgufFile();

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return file_size_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  // ---- metadata, in file order ----
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // Typed getters: throw r1pi::Error naming the file and key when missing or of the wrong type.
  // Integer getters accept any integer type whose value fits; get_f32 accepts FLOAT32/FLOAT64.
  std::string get_string(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const;
  uint32_t get_u32(std::string_view key) const;
  int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<float> get_f32_array(std::string_view key) const;
  std::vector<int32_t> get_i32_array(std::string_view key) const;  // any integer element type
  // The same, returning nullopt when the key is absent (still throw on a wrong type).
  std::optional<std::string> try_string(std::string_view key) const;
  std::optional<uint64_t> try_u64(std::string_view key) const;
  std::optional<float> try_f32(std::string_view key) const;
  std::optional<bool> try_bool(std::string_view key) const;

  // ---- tensors ----
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Start of a tensor's bytes inside the mapping (valid until release() or destruction).
  const uint8_t* tensor_data(const GgufTensorInfo& tensor) const;

  // The file's first data_offset() bytes (header, metadata, tensor infos), while mapped: what a
  // rank that has the file sends to ranks that do not (--weights-from-root).
  const uint8_t* header_bytes() const;
  // Parses header bytes received from another rank: metadata and tensor infos as open() would
  // validate them against a file of file_size bytes, without any tensor data (tensor_data()
  // throws). label names the file in messages.
  static GgufFile from_header(const std::string& label, const uint8_t* bytes, size_t n,
                              uint64_t file_size);
  // For a file made from_header: the bytes of one of its tensors (small ones such as rope_freqs
  // that the configuration reads), then served by tensor_data().
  void attach_tensor_data(const std::string& name, std::vector<uint8_t> bytes);
  // Tells the kernel that a tensor's pages are no longer needed (after copying out a slice), so
  // that a rank's resident memory stays near its shard while it loads.
  void drop_pages(const GgufTensorInfo& tensor) const;

  // Unmaps the file: metadata and tensor infos stay, tensor_data() may no longer be called.
  // Ranks that copied their slices call this so that only their shard stays resident.
  void release();
  bool mapped() const { return map_ != nullptr; }
  // Throws r1pi::Error naming the file when it has shrunk since open() (truncated or rewritten in
  // place): its pages past the new end would raise SIGBUS. tensor_data() calls it; a truncation
  // during a copy is caught by a SIGBUS handler that prints such an error and exits with status 1.
  void check_unchanged() const;

 private:
  GgufFile() = default;
  void parse(const uint8_t* bytes, size_t n);  // header, metadata, tensor infos; validates
  std::string path_;
  uint32_t version_ = 0;
  uint64_t file_size_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  const uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
  int fd_ = -1;  // open while mapped (check_unchanged)
  std::vector<std::pair<std::string, std::vector<uint8_t>>> attached_;
};

}  // namespace r1pi
