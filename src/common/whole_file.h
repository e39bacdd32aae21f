// Reading a file the user names (r1pi's -f prompt and --api-key-file, r1pi-model tokenize -f).
#pragma once
#include <string>

namespace r1pi {

// The file's bytes, unchanged. A directory or a FIFO would read as nothing (or block), so what is
// not a regular file is refused. Throws r1pi::Error naming the path and `what` ("prompt file").
std::string read_whole_file(const std::string& path, const std::string& what);

}  // namespace r1pi
