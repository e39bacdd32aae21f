// Writes a GGUF v3 file as a stream: declare metadata and tensors first, then feed tensor bytes
// in declaration order, in chunks of any size. Memory use is independent of the model size, so an
// 8B-shaped file is written with a few MB of RAM.
//
//   GgufWriter w;
//   w.add("general.architecture", GgufValue::string("llama"));
//   w.add_tensor("token_embd.weight", {4096, 128256}, GgmlType::Q4_0);
//   w.open("model.gguf");              // writes header, metadata, tensor infos
//   w.write_data(bytes, n);            // any number of times, tensors back to back
//   w.close();                         // checks every tensor got exactly its bytes
//
// The file is written through a temporary beside it (common/atomic_file.h) and appears, or replaces
// what was there, only at a successful close(): when close() finds a tensor incomplete, a write
// fails, or the writer is destroyed without close() (an exception mid-way), the temporary is
// removed and an older file of that name stays as it was.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "ggml/ggml_type.h"
#include "gguf/gguf_value.h"

namespace r1pi {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t alignment = 32);
  ~GgufWriter();
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  void add(std::string key, GgufValue value);                 // before open()
  void add_tensor(std::string name, std::vector<uint64_t> ne, GgmlType type);  // before open()
  void open(const std::string& path);                          // throws r1pi::Error
  // Appends tensor bytes; crossing the end of a tensor moves on to the next one (padding is
  // inserted automatically). Throws when more bytes arrive than the tensors declared.
  void write_data(const void* data, size_t n);
  void close();  // throws if a tensor is incomplete

  size_t tensor_count() const { return tensors_.size(); }

 private:
  struct Pending {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
    uint64_t n_bytes;
    uint64_t offset;
  };
  void pad_to_alignment();
  void write_raw(const void* data, size_t n);

  uint32_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Pending> tensors_;
  std::string path_;
  std::optional<AtomicFile> out_;
  FILE* file_ = nullptr;      // out_'s stream while open
  std::vector<char> buffer_;  // stdio buffer: large, so that small write_data() calls stay cheap
  uint64_t position_ = 0;   // bytes written so far
  size_t current_ = 0;      // tensor being filled
  uint64_t current_filled_ = 0;
};

}  // namespace r1pi
