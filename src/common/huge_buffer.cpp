#include "common/huge_buffer.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace r1pi {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;  // x86-64 and 4 KiB-granule aarch64 kernels
}

HugeBuffer::HugeBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  mapped_ = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, mapped_, MADV_HUGEPAGE);  // advice only: ignoring a refusal is right
#endif
  data_ = static_cast<uint8_t*>(p);
}

HugeBuffer::~HugeBuffer() {
  if (data_) munmap(data_, mapped_);
}

HugeBuffer::HugeBuffer(HugeBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      mapped_(std::exchange(o.mapped_, 0)) {}

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, mapped_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

}  // namespace r1pi
