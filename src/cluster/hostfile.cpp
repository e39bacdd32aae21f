#include "cluster/hostfile.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace r1pi {

namespace {

// Open MPI's per-host options: a name and a positive count.
bool known_option(const std::string& word) {
  for (const char* name : {"slots=", "max_slots=", "max-slots="}) {
    const std::string prefix(name);
    if (word.rfind(prefix, 0) != 0) continue;
    const std::string count = word.substr(prefix.size());
    return !count.empty() && std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           std::stoll(count.substr(0, 9)) > 0;
  }
  return false;
}

}  // namespace

std::vector<std::string> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot be read");
  std::vector<std::string> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    std::istringstream words(line.substr(0, line.find('#')));
    std::string host, word;
    if (!(words >> host)) continue;
    while (words >> word)
      if (!known_option(word)) throw Error(where + "'" + word + "' is not a hostfile option (slots=N, max_slots=N)");
    if (std::find(hosts.begin(), hosts.end(), host) != hosts.end())
      throw Error(where + host + " is listed twice: one line per board (slots=1 for its one rank)");
    hosts.push_back(host);
  }
  if (hosts.empty()) throw Error(path + ": no board in it (a host name per line, rank 0's first)");
  return hosts;
}

}  // namespace r1pi
