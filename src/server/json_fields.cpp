#include "server/json_fields.h"

#include <cmath>

#include "server/api_error.h"

namespace r1pi {

using nlohmann::json;

void bad_request(const std::string& message) { throw ApiError(400, message); }

std::string quoted_field(const char* field, std::string_view parent) {
  return "'" + (parent.empty() ? std::string() : std::string(parent) + ".") + field + "'";
}

bool has(const json& body, const char* field) { return body.contains(field) && !body[field].is_null(); }

double number_in(const json& body, const char* field, double lo, double hi, std::string_view parent) {
  const json& v = body[field];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    bad_request(quoted_field(field, parent) + " must be a number from " + json(lo).dump() + " to " + json(hi).dump());
  return v.get<double>();
}

int64_t integer_in(const json& body, const char* field, int64_t lo, int64_t hi, std::string_view parent) {
  const json& v = body[field];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    bad_request(quoted_field(field, parent) + " must be an integer from " + std::to_string(lo) + " to " +
                std::to_string(hi));
  return v.get<int64_t>();
}

bool flag(const json& body, const char* field, std::string_view parent) {
  if (!has(body, field)) return false;
  if (!body[field].is_boolean()) bad_request(quoted_field(field, parent) + " must be true or false");
  return body[field].get<bool>();
}

}  // namespace r1pi
