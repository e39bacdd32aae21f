// A request body's fields read and checked, for the OpenAI and the Anthropic parsers alike: every
// problem is an ApiError(400) naming the field, so both APIs refuse the same value in the same
// words. `parent` names the object a field sits in ("thinking" for 'thinking.budget_tokens').
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace r1pi {

[[noreturn]] void bad_request(const std::string& message);

// "'field'" or "'parent.field'", as the messages quote a field.
std::string quoted_field(const char* field, std::string_view parent = {});

// Present and not null (JSON null is a field left out).
bool has(const nlohmann::json& body, const char* field);

double number_in(const nlohmann::json& body, const char* field, double lo, double hi, std::string_view parent = {});
int64_t integer_in(const nlohmann::json& body, const char* field, int64_t lo, int64_t hi,
                   std::string_view parent = {});
// false when absent.
bool flag(const nlohmann::json& body, const char* field, std::string_view parent = {});

}  // namespace r1pi
