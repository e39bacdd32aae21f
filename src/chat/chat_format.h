// How a model's conversations become its prompt: its own Jinja chat template (the GGUF's
// tokenizer.chat_template, or --chat-template-file), rendered as Hugging Face transformers renders
// it, with the named template of its family (chat_template.h) as the fallback for a file without
// one, a template the engine cannot read, or --chat-template NAME. The family still says where the
// answer's reasoning starts and which text ends a turn; the template's text says how tools are
// called (tool_call_format.h).
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_message.h"
#include "chat/chat_options.h"
#include "chat/chat_template.h"
#include "chat/tool_call_format.h"
#include "jinja/jinja.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

struct ChatFormat {
  ChatTemplate family;
  std::shared_ptr<const jinja::Template> jinja;  // null: the family's named template renders
  std::string source;                            // the Jinja text (empty without one)
  std::string origin;                            // "the model's template", "--chat-template-file F", "deepseek-r1"
  ToolCallFormat tool_calls;
};

// From --chat-template / --chat-template-file and the model. Throws r1pi::Error for an unknown
// name or a file that cannot be read or parsed; a GGUF template the engine cannot parse falls
// back to the family's named one (warning names why on stderr).
ChatFormat chat_format_for(const ChatOptions& options, const Tokenizer& tokenizer);

// What a prompt is rendered from beside the messages.
struct PromptInput {
  std::vector<ChatMessage> messages;
  nlohmann::ordered_json tools;                                         // null: none offered
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();     // chat_template_kwargs
  std::optional<bool> thinking;                                         // enable_thinking
  bool add_generation_prompt = true;
  bool parallel_tool_calls = true;
};

// The prompt's text (BOS as the template writes it). mark: the messages' text marked with
// Tokenizer::mark_plain, for encode_chat_prompt(); unmarked for showing (/apply-template).
// A template's raise_exception is a jinja::RaisedError, other failures jinja::Error or r1pi::Error.
std::string render_chat_prompt(const ChatFormat& format, const Tokenizer& tokenizer, const PromptInput& input,
                               bool mark = false);
// The prompt's ids: the template's markers are control tokens, the messages' text is text; one
// BOS where the vocabulary wants one (the template's own is not doubled).
std::vector<int32_t> encode_chat_prompt(const ChatFormat& format, const Tokenizer& tokenizer, const PromptInput& input);

}  // namespace r1pi
