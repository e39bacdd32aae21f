// Command-line helpers shared by the benchmarks.
#pragma once
#include <string>
#include <vector>

namespace r1pi::bench {

// "1,2,16" -> {1, 2, 16}; every value at least 1.
std::vector<int> parse_list(const std::string& list);

}  // namespace r1pi::bench
