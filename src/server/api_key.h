// The API key: read from --api-key-file, and checked against the Authorization header
// ("Bearer <key>") in constant time (both sides hashed first, so that neither their content nor
// their length shows in the timing).
#pragma once
#include <string>

namespace r1pi {

bool api_key_matches(const std::string& authorization_header, const std::string& key);
// Either header carries the key: Authorization "Bearer <key>" (OpenAI's clients) or x-api-key
// "<key>" (Anthropic's). An absent header is "".
bool api_key_accepted(const std::string& authorization_header, const std::string& x_api_key_header,
                      const std::string& key);

// The key in the file, without the spaces, tabs and line ends around it (an editor's final
// newline, a pasted key's padding): no client could send those in its header. Throws r1pi::Error
// for a file that cannot be read, is empty or blank, or holds a control character (a second line)
// inside the key.
std::string read_api_key_file(const std::string& path);

}  // namespace r1pi
