#include "model/model_fingerprint.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <vector>

#include "common/error.h"
#include "common/sha256.h"
#include "gguf/gguf_file.h"

namespace r1pi {

namespace {

// 16 windows of 4 KiB per tensor: 64 KiB of each, about 19 MB of the 8B's 291 tensors (a Q4_0
// 8B file is 4.7 GB). A damaged stretch of a tenth of a tensor escapes all 14 drawn windows with
// odds of 0.9^14, about 1 in 4; a quarter, 1 in 56; a half, 1 in 16,000.
constexpr uint64_t kWindowBytes = 4096;
constexpr int kWindows = 16;
// Every rank draws the same offsets: std::mt19937_64 is specified bit for bit, and the offsets are
// taken from its raw output (a std::uniform_int_distribution may differ between libraries).
constexpr uint64_t kSeed = 0x7231706977656967;  // "r1piweig"

struct CheckName {
  const char* name;
  WeightCheck check;
};
constexpr CheckName kCheckNames[] = {{"sampled", WeightCheck::Sampled}, {"full", WeightCheck::Full}};

// The offsets of tensor `index`'s windows, in order: the first, the last, and kWindows - 2 drawn.
std::vector<uint64_t> window_offsets(uint64_t n_bytes, uint64_t index) {
  std::mt19937_64 rng(kSeed ^ index);
  std::vector<uint64_t> offsets = {0, n_bytes - kWindowBytes};
  for (int i = 2; i < kWindows; ++i) offsets.push_back(rng() % (n_bytes - kWindowBytes + 1));
  std::sort(offsets.begin(), offsets.end());  // read front to back: read-ahead follows
  return offsets;
}

// Starts reading the pages of [data, data + bytes) from the file, without waiting (advice: where
// it is refused the reads simply happen at the first touch).
void ask_for(const uint8_t* data, uint64_t bytes) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = uintptr_t(data) & ~(page - 1);
  madvise(reinterpret_cast<void*>(first), uintptr_t(data) + bytes - first, MADV_WILLNEED);
}

}  // namespace

WeightCheck weight_check(const std::string& name) {
  for (const CheckName& c : kCheckNames)
    if (name == c.name) return c.check;
  throw Error("--verify-weights " + name + ": give " + weight_check_names());
}

const char* weight_check_name(WeightCheck check) {
  for (const CheckName& c : kCheckNames)
    if (check == c.check) return c.name;
  return "?";
}

const char* weight_check_names() {
  static const std::string names = [] {
    std::string s;
    for (const CheckName& c : kCheckNames) s += (s.empty() ? "" : ", ") + std::string(c.name);
    return s;
  }();
  return names.c_str();
}

Fingerprint model_fingerprint(const GgufFile& file, WeightCheck check) {
  // Every span to hash, in file order; all asked of the disk before the first is read, so that
  // the reads go out together rather than one page fault at a time (and only the pages asked for:
  // a fault's read-around would fetch 128 KiB or more per window).
  struct Span {
    const uint8_t* data;
    uint64_t bytes;
  };
  std::vector<Span> spans;
  uint64_t index = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    const uint8_t* data = file.tensor_data(t);
    if (check == WeightCheck::Full || t.n_bytes <= kWindows * kWindowBytes) {
      spans.push_back({data, t.n_bytes});
    } else {
      for (const uint64_t offset : window_offsets(t.n_bytes, index)) spans.push_back({data + offset, kWindowBytes});
    }
    ++index;
  }
  if (check == WeightCheck::Sampled)
    for (const Span& s : spans) ask_for(s.data, s.bytes);
  Sha256 sha;
  const uint64_t size = file.file_size();
  sha.add(&size, sizeof size);
  sha.add(file.header_bytes(), file.data_offset());
  for (const Span& s : spans) sha.add(s.data, s.bytes);
  return sha.finish();
}

}  // namespace r1pi
