#include "bench_args.h"

#include <algorithm>
#include <cstdlib>

namespace r1pi::bench {

std::vector<int> parse_list(const std::string& list) {
  std::vector<int> v;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    v.push_back(std::max(1, std::atoi(list.substr(pos, comma - pos).c_str())));
    pos = comma + 1;
  }
  return v;
}

}  // namespace r1pi::bench
