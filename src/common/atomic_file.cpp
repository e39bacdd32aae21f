#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "common/error.h"

namespace r1pi {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void cannot_write(const std::string& path, int err) { throw WriteError(path, err); }

// ---- the temporaries a signal must not leave behind ----
// The handler unlinks every registered temporary, then lets the signal end the process as it
// would have. The list is a fixed array read without locks or allocation (async-signal-safe).
struct TempSlot {
  std::atomic<bool> used{false};
  char path[4096];
};
constexpr int kSlots = 16;
TempSlot g_slots[kSlots];
std::mutex g_slots_mutex;  // writers only: register and unregister
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temporaries_and_die(int sig) {
  for (TempSlot& s : g_slots)
    if (s.used.load(std::memory_order_acquire)) unlink(s.path);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Only where the signal still has its default action: a program that handles it itself (r1pi's
// Ctrl-C ends the run cleanly) unwinds, and the destructor removes the temporary.
void install_cleanup() {
  for (int sig : kCleanupSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL)
      continue;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
}

int register_temp(const std::string& temp) {
  static std::once_flag installed;
  std::call_once(installed, install_cleanup);
  if (temp.size() >= sizeof g_slots[0].path) return -1;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (g_slots[i].used.load(std::memory_order_relaxed)) continue;
    std::memcpy(g_slots[i].path, temp.c_str(), temp.size() + 1);
    g_slots[i].used.store(true, std::memory_order_release);
    return i;
  }
  return -1;  // more temporaries at once than slots (never in r1pi): such a one may stay on a signal
}

void unregister_temp(int& slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  g_slots[slot].used.store(false, std::memory_order_release);
  slot = -1;
}
// ---- end signals

// Where the bytes land: a symlink is followed (the link stays a link to the new file).
std::string resolved_target(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path resolved = fs::weakly_canonical(path, ec);
  return ec ? path : resolved.string();
}

// A name beside the target that no other writer (another process, another AtomicFile) picks.
int create_temp(const std::string& target, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  const fs::path p(target);
  for (;;) {
    temp = (p.parent_path() / ("." + p.filename().string() + ".r1pi-tmp-" + std::to_string(getpid()) + "-" +
                               std::to_string(counter++)))
               .string();
    // 0666 less the umask, as fopen(path, "w") would create the target.
    const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
}

// Syncs a folder so that a rename in it survives a power cut; best effort (some filesystems
// refuse to open or sync a folder, and the file's own bytes are synced already).
void sync_folder(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  const int fd = open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

}  // namespace

WriteError::WriteError(const std::string& path, int error_number)
    : Error(path + ": cannot write: " + std::strerror(error_number)), error_number(error_number) {}

void refuse_output_over_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (stat(output.c_str(), &out) != 0) return;  // not there yet: no input can be it
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input.empty() || stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw Error(output + ": the output is the input file " + input +
                  (input == output ? "" : " (a link to it)") + ": writing it would destroy the input; give another name");
  }
}

AtomicFile::AtomicFile(const std::string& path, const std::vector<std::string>& inputs)
    : path_(path), target_(resolved_target(path)) {
  refuse_output_over_input(path, inputs);
  struct stat st {};
  if (stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) cannot_write(path, EISDIR);
    file_ = std::fopen(target_.c_str(), "wb");
    if (!file_) cannot_write(path, errno);
    return;
  }
  const int fd = create_temp(target_, temp_);
  if (fd < 0) cannot_write(path, errno);
  slot_ = register_temp(temp_);
  // A replaced file keeps its permissions.
  if (st.st_mode != 0) fchmod(fd, st.st_mode & 07777);
  file_ = fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    close(fd);
    discard();
    cannot_write(path, err);
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (!temp_.empty()) unlink(temp_.c_str());
  unregister_temp(slot_);
  temp_.clear();
}

void AtomicFile::commit() {
  if (!file_) throw Error(path_ + ": cannot write: the file was closed");
  if (temp_.empty()) {  // a device or FIFO, written in place
    const bool failed = std::fflush(file_) != 0 || std::ferror(file_);
    const int err = errno;
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (failed || closed != 0) cannot_write(path_, failed ? err : errno);
    return;
  }
  std::FILE* file = file_;
  file_ = nullptr;
  try {
    sync_and_rename(file, temp_, target_);
  } catch (const Error&) {
    discard();
    throw;
  }
  unregister_temp(slot_);
  temp_.clear();
}

void sync_and_rename(std::FILE* file, const std::string& temp, const std::string& target) {
  // ferror: a write that failed earlier (its buffer is gone, so fflush alone would pass).
  bool failed = std::fflush(file) != 0 || std::ferror(file) || fsync(fileno(file)) != 0;
  int err = failed && errno ? errno : EIO;
  if (std::fclose(file) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (!failed && std::rename(temp.c_str(), target.c_str()) != 0) {
    failed = true;
    err = errno;
  }
  if (failed) cannot_write(target, err);
  sync_folder(target);
}

}  // namespace r1pi
