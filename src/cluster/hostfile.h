// The boards of an Open MPI hostfile, in rank order: a host per line ("pi0.local slots=1"), the
// options Open MPI takes after it, # comments and blank lines.
#pragma once
#include <string>
#include <vector>

namespace r1pi {

// Throws r1pi::Error naming the file and line: unreadable, an option that does not parse, a board
// listed twice, or no board at all.
std::vector<std::string> read_hostfile(const std::string& path);

}  // namespace r1pi
