// LD_PRELOAD shim for the fault tests: a process stops itself (SIGSTOP) when it opens the file
// named by $R1PI_TEST_STOP_AT_OPEN. r1pi opens the model file when it starts loading it, so a
// rank started with this shim is frozen inside the load at a point the test can wait for (the
// process's state turns to T), and the test then leaves it frozen or kills it: a board that hangs
// or dies during load, placed deterministically.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace {

using OpenFn = int (*)(const char*, int, ...);

int stop_then_open(const char* name, const char* path, int flags, va_list args) {
  const char* model = std::getenv("R1PI_TEST_STOP_AT_OPEN");
  if (model && path && std::strcmp(model, path) == 0) raise(SIGSTOP);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? mode_t(va_arg(args, int)) : 0;
  const auto real = reinterpret_cast<OpenFn>(dlsym(RTLD_NEXT, name));
  return real(path, flags, mode);
}

}  // namespace

extern "C" int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const int fd = stop_then_open("open", path, flags, args);
  va_end(args);
  return fd;
}

extern "C" int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const int fd = stop_then_open("open64", path, flags, args);
  va_end(args);
  return fd;
}
