// What the completion routes (OpenAI's and Anthropic's) share between a parsed request and the
// engine: the prompt through the model's template, the checks that need the model, the answer's
// constraint, the job to queue.
#pragma once
#include <memory>

#include "chat/chat_format.h"
#include "server/api_request.h"
#include "server/client_connection.h"
#include "server/http_api.h"
#include "server/job_queue.h"

namespace r1pi {

// Whether the answer is read for tool calls: a chat request with tools, tool_choice not none.
bool offers_tools(const ApiRequest& r);

// The request as the template's input.
PromptInput chat_input(const ApiContext& c, const ApiRequest& r);

// The prompt's ids (a template's refusal or failure is an ApiError 400 with its message).
std::vector<int32_t> prompt_of(const ApiContext& c, const ApiRequest& r);

// The prompt rendered as text, for POST /apply-template (as llama-server's route).
std::string rendered_prompt(const ApiContext& c, const ApiRequest& r);

// The job for a request: checked against the model, its prompt and its constraint made.
std::shared_ptr<Job> make_job(const ApiContext& c, const ApiRequest& r, ClientConnection connection);

}  // namespace r1pi
