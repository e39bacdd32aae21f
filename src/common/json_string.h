// A string as a JSON string literal, for text that may not be UTF-8 (GGUF token texts): quotes,
// backslashes and control characters escaped as JSON escapes them (Python's json.dumps with
// ensure_ascii=False writes the same), every other byte copied as it is.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

void append_json_string(std::string& out, std::string_view s);

}  // namespace r1pi
