#include "cluster/file_sha256.h"

#include <fstream>
#include <vector>

#include "common/sha256.h"

namespace r1pi {

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    sha.add(buffer.data(), size_t(in.gcount()));
  }
  return in.bad() ? "" : to_hex(sha.finish());
}

}  // namespace r1pi
