// A request to /v1/chat/completions or /v1/completions, read from its JSON body and checked:
// every error is an ApiError (400) naming the field. Fields r1pi does not know are ignored.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "sampling/sampler.h"

namespace r1pi {

enum class Endpoint { Chat, Completion };

struct ApiRequest {
  Endpoint endpoint = Endpoint::Chat;
  std::vector<ChatMessage> messages;   // chat
  std::optional<bool> enable_thinking; // chat_template_kwargs.enable_thinking; else --reasoning
  std::string prompt;                  // completion
  int max_tokens = -1;                 // max_tokens / max_completion_tokens; -1: until the end
  SamplerParams sampler;               // seed resolved (random when not given)
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;          // stream_options.include_usage
  bool ignore_eos = false;             // llama-server's: generate past the end of the turn
};

// defaults: the server's sampling for what a request leaves out.
ApiRequest parse_api_request(Endpoint endpoint, std::string_view body, const SamplerParams& defaults);

}  // namespace r1pi
