// Helpers shared by the tests: where the external data lives, where the built programs are,
// scratch folders, and running a program to look at its exit code and output.
#pragma once
#include <bit>
#include <cstdint>
#include <string>

namespace r1pi::test {

// A float's bit pattern and back (for tests that compare or build exact bytes).
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

// ../shared/data beside the checkout, or $R1PI_SHARED_DATA when set.
std::string shared_data(const std::string& file = "");
// The build folder (holds r1pi and r1pi-model).
std::string bin_dir();
// A fresh folder under the build tree for one test's files.
std::string scratch_dir(const std::string& name);

struct CommandResult {
  int exit_code = -1;   // the program's exit status; 128+N when killed by signal N
  std::string output;   // stdout and stderr together
};
// Runs a shell command line and collects what it prints.
CommandResult run_command(const std::string& command_line);

}  // namespace r1pi::test
