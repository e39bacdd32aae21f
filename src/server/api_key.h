// The API key check: the Authorization header against "Bearer <key>", compared in constant time
// (both sides hashed first, so that neither their content nor their length shows in the timing).
#pragma once
#include <string>

namespace r1pi {

bool api_key_matches(const std::string& authorization_header, const std::string& key);

}  // namespace r1pi
