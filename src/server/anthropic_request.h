// A request to Anthropic's Messages API (POST /v1/messages and /v1/messages/count_tokens) read
// from its JSON body into r1pi's ApiRequest, so that one engine and one template serve both APIs.
// Checked as Anthropic checks it: every error is an ApiError(400) naming the field (sent in
// Anthropic's shape by anthropic_error_body, anthropic_response.h), and a top-level field outside
// the documented ones r1pi reads or has no use for is refused, as Anthropic refuses it.
#pragma once
#include <string_view>

#include "server/api_request.h"

namespace r1pi {

// CountTokens reads the body /v1/messages would get, with max_tokens no longer required: a client
// may count the very request it is about to send.
enum class AnthropicRoute { Messages, CountTokens };

// defaults: the server's sampling for what a request leaves out (Anthropic's own default
// temperature, 1.0, is not imposed: a server started with --temp keeps it).
ApiRequest parse_anthropic_request(AnthropicRoute route, std::string_view body, const SamplerParams& defaults);

}  // namespace r1pi
