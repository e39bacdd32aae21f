#include "app/version_text.h"

#include "build_info.h"
#include "neon/kernels.h"
#ifdef R1PI_HAVE_MPI
#include <mpi.h>
#endif

namespace r1pi {

namespace {

// MPI_Get_library_version may be called before MPI_Init; its text runs on past the first comma
// with packaging details ("Open MPI v4.1.4, package: Debian OpenMPI, ...").
std::string mpi_library() {
#ifdef R1PI_HAVE_MPI
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string name(text, size_t(length));
  return name.substr(0, name.find_first_of(",\n"));
#else
  return "none (this build runs one rank)";
#endif
}

#ifdef __clang__
constexpr const char* kCompiler = "clang";
#else
constexpr const char* kCompiler = "gcc";
#endif

}  // namespace

std::string version_text(const std::string& program) {
  return program + " " + R1PI_COMMIT + "\nkernels: " + kernels().name + "\nMPI: " + mpi_library() +
         "\ncompiler: " + kCompiler + " " + __VERSION__;
}

}  // namespace r1pi
