// One message of a conversation, as the templates render it.
#pragma once
#include <string>

namespace r1pi {

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;
};

}  // namespace r1pi
