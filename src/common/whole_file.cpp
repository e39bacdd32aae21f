#include "common/whole_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace r1pi {

std::string read_whole_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error(path + ": cannot read the " + what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": the " + what + " is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the " + what);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace r1pi
