#include "server/json_fields.h"

#include "server/api_error.h"

namespace r1pi {

void bad_request(const std::string& message) { throw ApiError(400, message); }

std::string quoted_field(const char* field, std::string_view parent) {
  return "'" + (parent.empty() ? std::string() : std::string(parent) + ".") + field + "'";
}

}  // namespace r1pi
