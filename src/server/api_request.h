// A request to /v1/chat/completions or /v1/completions, read from its JSON body and checked:
// every error is an ApiError (400) naming the field. Fields r1pi does not know are ignored.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "sampling/sampler.h"

namespace r1pi {

enum class Endpoint { Chat, Completion };

// tool_choice: whether the answer may (Auto), must not (None), must (Required) call a tool, or must
// call the one named (Function).
enum class ToolChoice { Auto, None, Required, Function };

struct ApiRequest {
  Endpoint endpoint = Endpoint::Chat;
  std::vector<ChatMessage> messages;   // chat
  std::optional<bool> enable_thinking; // chat_template_kwargs.enable_thinking; else --reasoning
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  nlohmann::ordered_json tools;        // chat: OpenAI's function tools as given (null: none)
  ToolChoice tool_choice = ToolChoice::Auto;
  std::string tool_choice_name;        // ToolChoice::Function's function
  bool parallel_tool_calls = true;
  std::string grammar;                 // GBNF the answer must match (grammar, or from a JSON schema)
  nlohmann::ordered_json json_schema;  // the schema the answer must match (null: none); in the
                                       // order written, which the grammar's properties follow
  std::string user;                    // the prompt cache's scope within an API key (--cache-scope)
  std::string prompt;                  // completion
  bool parse_special = false;          // completion: the prompt may spell control tokens
  int max_tokens = -1;                 // max_tokens / max_completion_tokens; -1: until the end
  SamplerParams sampler;               // seed resolved (random when not given); logit_bias and
                                       // logprobs (n_probs) too
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;          // stream_options.include_usage
  bool ignore_eos = false;             // llama-server's: generate past the end of the turn
};

// defaults: the server's sampling for what a request leaves out.
ApiRequest parse_api_request(Endpoint endpoint, std::string_view body, const SamplerParams& defaults);

}  // namespace r1pi
