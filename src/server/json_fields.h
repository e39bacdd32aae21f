// A request body's fields read and checked, for the OpenAI and the Anthropic parsers alike: every
// problem is an ApiError(400) naming the field, so both APIs refuse the same value in the same
// words. `parent` names the object a field sits in ("thinking" for 'thinking.budget_tokens').
// Templates over the JSON type: the Anthropic parser reads an ordered_json, so that the tools'
// schemas and the tool calls' arguments keep the order the client gave (the prompt renders them).
#pragma once
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace r1pi {

[[noreturn]] void bad_request(const std::string& message);

// "'field'" or "'parent.field'", as the messages quote a field.
std::string quoted_field(const char* field, std::string_view parent = {});

// Present and not null (JSON null is a field left out).
template <class Json>
bool has(const Json& body, const char* field) {
  return body.contains(field) && !body[field].is_null();
}

template <class Json>
double number_in(const Json& body, const char* field, double lo, double hi, std::string_view parent = {}) {
  const Json& v = body[field];
  if (!v.is_number() || !std::isfinite(v.template get<double>()) || v.template get<double>() < lo ||
      v.template get<double>() > hi)
    bad_request(quoted_field(field, parent) + " must be a number from " + Json(lo).dump() + " to " + Json(hi).dump());
  return v.template get<double>();
}

template <class Json>
int64_t integer_in(const Json& body, const char* field, int64_t lo, int64_t hi, std::string_view parent = {}) {
  const Json& v = body[field];
  if (!v.is_number_integer() || v.template get<int64_t>() < lo || v.template get<int64_t>() > hi)
    bad_request(quoted_field(field, parent) + " must be an integer from " + std::to_string(lo) + " to " +
                std::to_string(hi));
  return v.template get<int64_t>();
}

// false when absent.
template <class Json>
bool flag(const Json& body, const char* field, std::string_view parent = {}) {
  if (!has(body, field)) return false;
  if (!body[field].is_boolean()) bad_request(quoted_field(field, parent) + " must be true or false");
  return body[field].template get<bool>();
}

// A required string.
template <class Json>
const std::string& string_field(const Json& body, const char* field, std::string_view parent = {}) {
  if (!body.is_object() || !body.contains(field) || !body[field].is_string())
    bad_request(quoted_field(field, parent) + " must be a string");
  return body[field].template get_ref<const std::string&>();
}

}  // namespace r1pi
