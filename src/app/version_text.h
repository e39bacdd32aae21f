// What `--version` prints: the program, the commit it was built from, the kernels this CPU gets,
// the MPI library (or none) and the compiler.
#pragma once
#include <string>

namespace r1pi {

std::string version_text(const std::string& program);

}  // namespace r1pi
