#include "common/standard_output.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace r1pi {

namespace {

// Why an earlier write to stdout failed. stdio drops a buffer it could not write and keeps only
// the error flag, so the descriptor is asked again: an empty write reports a device's error
// (/dev/full: ENOSPC), and a pipe or socket whose reader has gone polls as an error (EPIPE).
int earlier_write_error() {
  if (write(STDOUT_FILENO, "", 0) < 0) return errno;
  struct stat st {};
  if (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    pollfd p{STDOUT_FILENO, POLLOUT, 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP))) return EPIPE;
  }
  return EIO;  // a regular file's failed write (a full disk) leaves nothing to ask
}

}  // namespace

int exit_status_after_stdout(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return status;
  const int err = flushed ? earlier_write_error() : errno;
  std::fprintf(stderr, "error: writing to standard output: %s\n", std::strerror(err));
  return status != 0 ? status : 1;
}

}  // namespace r1pi
