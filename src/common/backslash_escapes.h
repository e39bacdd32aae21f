// llama.cpp's -e/--escape: a prompt typed in a shell cannot easily hold a newline, so "\n" and the
// like in it are read as the characters they name.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

// text with \n, \r, \t, \\, \", \' and \xHH (two hex digits: that byte) replaced by what they stand
// for, as llama.cpp's string_process_escapes; any other backslash, and one at the end, stays as it is.
std::string backslash_escapes(std::string_view text);

}  // namespace r1pi
