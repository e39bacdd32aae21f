// One exception type for every user-facing failure (bad file, bad flag, context overflow).
// Programs catch it at main(), print "error: <what>" and exit with status 1: a clear message,
// never a crash. Messages name the file or input and the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace r1pi {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace r1pi
