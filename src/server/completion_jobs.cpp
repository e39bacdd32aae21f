#include "server/completion_jobs.h"

#include "server/api_error.h"
#include "server/request_constraint.h"

namespace r1pi {

namespace {

// What parse_api_request cannot check without the model: logit_bias ids in its vocabulary.
void check_against_model(const ApiContext& c, const ApiRequest& r) {
  for (const auto& [id, bias] : r.sampler.logit_bias)
    if (id >= c.tokenizer.n_vocab())
      throw ApiError(400, "'logit_bias' names token " + std::to_string(id) + ", not an id of this vocabulary (0 to " +
                              std::to_string(c.tokenizer.n_vocab() - 1) + ")");
}

// A template's refusal (raise_exception) or failure is the request's: 400 with its message.
template <typename F>
auto through_template(F&& render) {
  try {
    return render();
  } catch (const jinja::RaisedError& e) {
    throw ApiError(400, std::string("the chat template refused the conversation: ") + e.what());
  } catch (const jinja::Error& e) {
    throw ApiError(400, std::string("the chat template failed on this conversation: ") + e.what());
  }
}

}  // namespace

bool offers_tools(const ApiRequest& r) {
  return r.endpoint == Endpoint::Chat && !r.tools.is_null() && !r.tools.empty() && r.tool_choice != ToolChoice::None;
}

// tool_choice none hides the tools; --reasoning off is enable_thinking false and --reasoning-effort
// the template's reasoning_effort where the request does not say.
PromptInput chat_input(const ApiContext& c, const ApiRequest& r) {
  PromptInput in;
  in.messages = r.messages;
  if (offers_tools(r)) in.tools = r.tools;
  in.kwargs = r.template_kwargs.is_null() ? nlohmann::ordered_json::object() : r.template_kwargs;
  if (!c.options.chat.reasoning_effort.empty() && !in.kwargs.contains("reasoning_effort"))
    in.kwargs["reasoning_effort"] = c.options.chat.reasoning_effort;
  in.thinking = r.enable_thinking ? r.enable_thinking : c.options.chat.reasoning ? std::nullopt : std::optional(false);
  in.parallel_tool_calls = r.parallel_tool_calls;
  return in;
}

std::vector<int32_t> prompt_of(const ApiContext& c, const ApiRequest& r) {
  std::vector<int32_t> prompt =
      r.endpoint == Endpoint::Chat
          ? through_template([&] { return encode_chat_prompt(c.format, c.tokenizer, chat_input(c, r)); })
          : c.tokenizer.encode(r.prompt, c.tokenizer.add_bos(), r.parse_special);
  if (prompt.empty()) throw ApiError(400, "the prompt is empty");
  if (prompt.size() >= size_t(c.n_ctx))
    throw ApiError(400,
                   "the prompt is " + std::to_string(prompt.size()) + " tokens and does not fit the context of " +
                       std::to_string(c.n_ctx) + " tokens",
                   "invalid_request_error", "context_length_exceeded");
  return prompt;
}

std::string rendered_prompt(const ApiContext& c, const ApiRequest& r) {
  return through_template([&] { return render_chat_prompt(c.format, c.tokenizer, chat_input(c, r)); });
}

std::shared_ptr<Job> make_job(const ApiContext& c, const ApiRequest& r, ClientConnection connection) {
  check_against_model(c, r);
  auto job = std::make_shared<Job>(r, prompt_of(c, r), connection);
  job->constraint = request_constraint(r, c.tokenizer,
                                       r.endpoint == Endpoint::Chat ? answer_start(c.chat_template) : ReasoningStart::None,
                                       c.format.tool_calls);
  return job;
}

}  // namespace r1pi
