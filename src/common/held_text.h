// Streaming text past markers that may arrive cut over several tokens ("</th" + "ink>"): what
// could still become a marker is held back until the next piece decides it.
#pragma once
#include <cstddef>
#include <string_view>

namespace r1pi {

// The length of the longest end of text that is a proper beginning of marker (0 when none).
inline size_t partial_marker_at_end(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  return 0;
}

}  // namespace r1pi
