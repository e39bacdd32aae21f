// Anonymous memory for large read-mostly data (the weights): one mapping, with transparent huge
// pages asked for. Decode streams every weight byte per token; with 4 KiB pages that means a TLB
// miss every 4 KiB, which costs a large part of the read bandwidth (measured: bench/README.md).
// Where THP is off or "never", the memory is simply ordinary pages.
#pragma once
#include <cstddef>
#include <cstdint>

namespace r1pi {

class HugeBuffer {
 public:
  HugeBuffer() = default;
  // Throws std::bad_alloc when the memory cannot be mapped (like operator new).
  explicit HugeBuffer(size_t bytes);
  ~HugeBuffer();
  HugeBuffer(HugeBuffer&& o) noexcept;
  HugeBuffer& operator=(HugeBuffer&& o) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;     // bytes asked for
  size_t mapped_ = 0;   // bytes mapped (rounded up to the huge page size)
};

}  // namespace r1pi
