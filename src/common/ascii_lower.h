// The lowercase of a name, ASCII letters only: for case-insensitive matches of weight type, preset
// and quantisation mix names, of URL schemes and HTTP header names, and Jinja's lower (as the
// templates use it, on ASCII). Not std::tolower, whose answer depends on the program's locale.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

}  // namespace r1pi
