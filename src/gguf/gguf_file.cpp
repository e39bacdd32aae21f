#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "common/error.h"
#include "gguf/gguf_byte_reader.h"
#include "gguf/gguf_format.h"
#include "gguf/gguf_metadata_reader.h"
#include "gguf/gguf_tensor_reader.h"

namespace r1pi {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw Error(path + ": " + problem);
}

struct Mapping {
  const uint8_t* data;
  size_t size;
  int fd;
};

// ---- a file truncated while mapped ----
// Pages past a file's new end raise SIGBUS when touched: tensor_data() checks the size first, and
// for a truncation in the middle of a copy the handler below turns the signal on a registered
// mapping into "error: <path>: ..." and exit status 1. The registry is a fixed array of atomics so
// that the handler reads it without locks or allocation (async-signal-safe).
struct MappedRange {
  std::atomic<uintptr_t> begin{0}, end{0};
  char message[1024];
  size_t length = 0;
};
constexpr size_t kMaxRanges = 64;
MappedRange g_ranges[kMaxRanges];
std::mutex g_ranges_mutex;  // writers only: register and unregister
struct sigaction g_previous_sigbus;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const MappedRange& r : g_ranges) {
    const uintptr_t begin = r.begin.load(std::memory_order_acquire);
    if (begin != 0 && at >= begin && at < r.end.load(std::memory_order_relaxed)) {
      ssize_t ignored = write(STDERR_FILENO, r.message, r.length);
      (void)ignored;
      _exit(1);
    }
  }
  // Not a model file's page: whatever handled SIGBUS before (the default: a core dump).
  if (g_previous_sigbus.sa_flags & SA_SIGINFO) {
    if (g_previous_sigbus.sa_sigaction) return g_previous_sigbus.sa_sigaction(sig, info, context);
  } else if (g_previous_sigbus.sa_handler != SIG_IGN && g_previous_sigbus.sa_handler != SIG_DFL &&
             g_previous_sigbus.sa_handler) {
    return g_previous_sigbus.sa_handler(sig);
  }
  signal(SIGBUS, SIG_DFL);  // returning re-runs the access, which then ends the process as before
}

void register_mapping(const std::string& path, const uint8_t* data, size_t size) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
  std::lock_guard<std::mutex> lock(g_ranges_mutex);
  for (MappedRange& r : g_ranges) {
    if (r.begin.load(std::memory_order_relaxed) != 0) continue;
    const int n = std::snprintf(r.message, sizeof r.message,
                                "error: %s: the file was truncated or rewritten while r1pi was reading it "
                                "(bytes past its new end are gone); leave a model file unchanged while it loads\n",
                                path.c_str());
    r.length = std::min(size_t(n > 0 ? n : 0), sizeof r.message - 1);
    r.end.store(uintptr_t(data) + size, std::memory_order_relaxed);
    r.begin.store(uintptr_t(data), std::memory_order_release);
    return;
  }
  // More files mapped at once than slots (never in r1pi): such a file keeps the plain signal.
}

void unregister_mapping(const uint8_t* data) {
  std::lock_guard<std::mutex> lock(g_ranges_mutex);
  for (MappedRange& r : g_ranges)
    if (r.begin.load(std::memory_order_relaxed) == uintptr_t(data)) r.begin.store(0, std::memory_order_release);
}

Mapping map_file(const std::string& path) {
  // O_NONBLOCK: a FIFO would otherwise block open(2) until a writer comes; this way it is refused
  // below as not a regular file. (It changes nothing for the regular files that are mapped.)
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    fail(path, "empty file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  if (data == MAP_FAILED) {
    ::close(fd);
    fail(path, std::string("cannot map: ") + std::strerror(err));
  }
  // The descriptor stays open while the file is mapped: fstat() on it sees a truncation of the
  // mapped file itself, where the path may name a replacement by then.
  return {static_cast<const uint8_t*>(data), size, fd};
}

struct Header {
  uint32_t version;
  uint64_t n_tensors;
  uint64_t n_metadata;
};

Header read_header(GgufByteReader& reader) {
  if (reader.remaining() < sizeof gguf_format::kMagic) {
    reader.fail("too small to be a GGUF file (" + std::to_string(reader.remaining()) + " bytes)");
  }
  uint8_t magic[4];
  for (uint8_t& byte : magic) byte = reader.read<uint8_t>();
  if (std::memcmp(magic, gguf_format::kMagic, sizeof magic) != 0) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%02x %02x %02x %02x", magic[0], magic[1], magic[2], magic[3]);
    reader.fail(std::string("not a GGUF file (starts with bytes ") + hex + ", expected 'GGUF')");
  }
  Header header;
  header.version = reader.read<uint32_t>();
  if (header.version == 1) {
    reader.fail(
        "GGUF version 1 is not supported (it predates 64-bit counts); re-convert the model "
        "with a current llama.cpp");
  }
  if (header.version == __builtin_bswap32(2) || header.version == __builtin_bswap32(3)) {
    reader.fail("big-endian GGUF files are not supported");
  }
  if (header.version != 2 && header.version != 3) {
    reader.fail("unsupported GGUF version " + std::to_string(header.version) +
                " (versions 2 and 3 are read)");
  }
  header.n_tensors = reader.read<uint64_t>();
  header.n_metadata = reader.read<uint64_t>();
  return header;
}

uint64_t alignment_from(const std::vector<std::pair<std::string, GgufValue>>& metadata,
                        GgufByteReader& reader) {
  for (const auto& [key, value] : metadata) {
    if (key != gguf_format::kAlignmentKey) continue;
    if (value.type != GgufValueType::UINT32) {
      reader.fail(key + " has type " + std::string(gguf_value_type_name(value.type)) +
                  ", must be UINT32");
    }
    if (!gguf_format::is_power_of_two(value.u)) {
      reader.fail(key + " is " + std::to_string(value.u) + ", must be a power of two");
    }
    return value.u;
  }
  return gguf_format::kDefaultAlignment;
}

}  // namespace

uint64_t GgufTensorInfo::rows() const {
  uint64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile file;
  file.path_ = path;
  Mapping mapping = map_file(path);
  // From here on the destructor unmaps, whichever check throws.
  file.map_ = mapping.data;
  file.map_size_ = mapping.size;
  file.fd_ = mapping.fd;
  file.file_size_ = mapping.size;
  register_mapping(path, file.map_, file.map_size_);
  file.parse(file.map_, file.map_size_);
  return file;
}

GgufFile GgufFile::from_header(const std::string& label, const uint8_t* bytes, size_t n,
                               uint64_t file_size) {
  GgufFile file;
  file.path_ = label;
  file.file_size_ = file_size;
  file.parse(bytes, n);
  return file;
}

void GgufFile::parse(const uint8_t* bytes, size_t n) {
  GgufFile& file = *this;
  GgufByteReader reader(bytes, n, path_);
  Header header = read_header(reader);
  reader.set_counts(header.n_metadata, header.n_tensors);
  file.version_ = header.version;
  file.metadata_ = read_gguf_metadata(reader, header.n_metadata);
  file.alignment_ = alignment_from(file.metadata_, reader);
  file.tensors_ = read_gguf_tensor_infos(reader, header.n_tensors, file.alignment_);
  file.data_offset_ = gguf_format::align_up(reader.position(), file.alignment_);
  check_gguf_tensor_layout(file.tensors_, file.data_offset_, file.file_size_, reader);
}

const uint8_t* GgufFile::header_bytes() const {
  if (!map_) fail(path_, "header read after the file was released");
  return map_;
}

void GgufFile::drop_pages(const GgufTensorInfo& tensor) const {
  if (!map_) return;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = uintptr_t(tensor_data(tensor)) & ~(page - 1);
  const uintptr_t end = uintptr_t(tensor_data(tensor) + tensor.n_bytes);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

GgufFile::GgufFile(GgufFile&& other) noexcept { *this = std::move(other); }

GgufFile& GgufFile::operator=(GgufFile&& other) noexcept {
  if (this == &other) return *this;
  release();
  path_ = std::move(other.path_);
  version_ = other.version_;
  file_size_ = other.file_size_;
  alignment_ = other.alignment_;
  data_offset_ = other.data_offset_;
  metadata_ = std::move(other.metadata_);
  tensors_ = std::move(other.tensors_);
  attached_ = std::move(other.attached_);
  map_ = other.map_;
  map_size_ = other.map_size_;
  fd_ = other.fd_;
  other.map_ = nullptr;
  other.map_size_ = 0;
  other.fd_ = -1;
  return *this;
}

GgufFile::~GgufFile() { release(); }

void GgufFile::release() {
  if (map_) {
    unregister_mapping(map_);
    munmap(const_cast<uint8_t*>(map_), map_size_);
  }
  if (fd_ >= 0) ::close(fd_);
  map_ = nullptr;
  map_size_ = 0;
  fd_ = -1;
}

void GgufFile::check_unchanged() const {
  struct stat st;
  if (fd_ < 0 || fstat(fd_, &st) != 0 || uint64_t(st.st_size) >= map_size_) return;
  fail(path_, "the file shrank from " + std::to_string(map_size_) + " to " + std::to_string(st.st_size) +
                  " bytes while r1pi was reading it (truncated or rewritten in place); leave a model file "
                  "unchanged while it loads");
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& [k, value] : metadata_) {
    if (k == key) return &value;
  }
  return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const GgufTensorInfo& tensor : tensors_) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

void GgufFile::attach_tensor_data(const std::string& name, std::vector<uint8_t> bytes) {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t || bytes.size() != t->n_bytes) fail(path_, "tensor '" + name + "': attached bytes do not fit");
  attached_.emplace_back(name, std::move(bytes));
}

const uint8_t* GgufFile::tensor_data(const GgufTensorInfo& tensor) const {
  if (!map_) {
    for (const auto& [name, bytes] : attached_)
      if (name == tensor.name) return bytes.data();
    fail(path_, "tensor '" + tensor.name + "' read after the file was released");
  }
  // The layout was validated for this file's tensors; this guards against an info from another
  // file.
  uint64_t data_size = data_offset_ <= map_size_ ? map_size_ - data_offset_ : 0;
  if (tensor.offset > data_size || tensor.n_bytes > data_size - tensor.offset) {
    fail(path_, "tensor '" + tensor.name + "' lies outside the file");
  }
  check_unchanged();  // one fstat per tensor read: before its pages are touched
  return map_ + data_offset_ + tensor.offset;
}

}  // namespace r1pi
