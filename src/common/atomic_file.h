// Writing a file the user names (r1pi-model's outputs, r1pi-perplexity's --save-logits, r1pi's
// --timings FILE.csv, the cost-curve cache) so that nothing of theirs is lost on the way:
//
//   AtomicFile out(path, {input_path});   // refuses an output that is an input; makes the temporary
//   std::fwrite(bytes, 1, n, out.stream());
//   out.commit();                          // flush, fsync, rename over path: all or nothing
//
// The bytes go to a temporary file beside the target, which replaces the target only once whole
// and on disk. A failed write, an exception (the destructor) or Ctrl-C / SIGTERM in a program
// that has no handler of its own removes the temporary and leaves the old target as it was. A
// target that exists and is not a regular file (/dev/null, /dev/full, a FIFO) is written in place:
// there is nothing to keep, and a device must not be renamed over. A symlink's target is replaced,
// the link kept.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.h"

namespace r1pi {

// What AtomicFile and sync_and_rename throw when the system refuses: "PATH: cannot write: REASON",
// with errno kept for a writer that words its messages its own way.
struct WriteError : Error {
  WriteError(const std::string& path, int error_number);
  int error_number;
};

// Throws r1pi::Error when `output` is the same file as one of `inputs` (same device and inode, so
// that a symlink or a hard link is caught too); inputs that do not exist, or are empty, are no
// match. Call it before anything is opened for writing, with every file the program reads.
void refuse_output_over_input(const std::string& output, const std::vector<std::string>& inputs);

class AtomicFile {
 public:
  // Checks `inputs` (refuse_output_over_input), then creates the temporary file. Throws
  // WriteError naming `path` when it cannot.
  explicit AtomicFile(const std::string& path, const std::vector<std::string>& inputs = {});
  ~AtomicFile();  // without commit(): the temporary is removed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() const { return file_; }
  const std::string& path() const { return path_; }
  // Flushes, syncs and closes the stream, then renames the temporary over the target. Throws
  // WriteError (the temporary removed) when any step fails, a write before it included.
  void commit();
  // Closes and removes the temporary now (a writer that found its output incomplete).
  void discard();

 private:
  std::string path_;   // as the user gave it, for messages
  std::string target_; // where it lands: path_, or a symlink's target
  std::string temp_;   // empty when writing in place
  std::FILE* file_ = nullptr;
  int slot_ = -1;      // the temporary's entry in the signal handler's list
};

// The last steps of a write through a temporary file, for a writer that keeps its own (the Hub
// download's resumable DEST.part): flushes, fsyncs and closes `file`, renames `temp` over `target`
// and syncs the folder. Throws WriteError naming `target` (the file is closed either way).
void sync_and_rename(std::FILE* file, const std::string& temp, const std::string& target);

}  // namespace r1pi
