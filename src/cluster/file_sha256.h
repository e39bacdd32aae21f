// The SHA-256 of a file's bytes, as sha256sum prints it: is the r1pi on this board rank 0's?
#pragma once
#include <string>

namespace r1pi {

// 64 lowercase hex digits; "" when the file cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace r1pi
