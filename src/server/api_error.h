// Errors in OpenAI's shape: {"error": {"message", "type", "param", "code"}} with an HTTP status.
#pragma once
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace r1pi {

struct ApiError : std::runtime_error {
  ApiError(int status, const std::string& message, std::string type = "invalid_request_error",
           std::string code = "")
      : std::runtime_error(message), status(status), type(std::move(type)), code(std::move(code)) {}
  int status;
  std::string type, code;
};

nlohmann::json error_body(const std::string& message, const std::string& type, const std::string& code);
inline nlohmann::json error_body(const ApiError& e) { return error_body(e.what(), e.type, e.code); }

}  // namespace r1pi
