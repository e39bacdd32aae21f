// The chat templates r1pi knows, rendered in C++ rather than by a Jinja engine, each checked
// against its Jinja original (tests/server/chat_template_cases.json): DeepSeek-R1's (earlier
// answers keep only the text after their last "</think>", the answer opens inside "<think>\n"; the
// same template over the Llama 3 and the Qwen vocabularies), Llama 3's, Qwen3's (ChatML with think
// blocks and enable_thinking), Qwen2.5's (ChatML with its default system message) and plain
// ChatML. Which one a model wants is read from its GGUF tokenizer.chat_template, else from the
// special tokens its vocabulary has.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.h"
#include "chat/reasoning_split.h"
#include "chat/tool_call_format.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

enum class ChatTemplate { Harmony, DeepSeekR1, Llama3, Qwen3, Qwen25, ChatML };

// "harmony", "deepseek-r1", "llama3", "qwen3", "qwen2.5", "chatml"; nothing for another name.
std::optional<ChatTemplate> chat_template_named(std::string_view name);
std::string chat_template_name(ChatTemplate t);
// The names chat_template_named() knows, for messages ("deepseek-r1, llama3, ...").
std::string chat_template_names();

// The first template whose markers the model's tokenizer.chat_template holds, else the first
// whose markers are all tokens of its vocabulary, else ChatML (plain text markers that any
// vocabulary can spell). Markers: "<｜Assistant｜>" (R1), "<|start_header_id|>" (Llama 3),
// "<|im_start|>" with "<think>" (Qwen3) or with Qwen2.5's default system message, "<|im_start|>".
ChatTemplate detect_chat_template(const Tokenizer& tokenizer);

// One of the roles a conversation may hold (OpenAI's): system, developer, user, assistant, tool.
bool known_chat_role(std::string_view role);

// The prompt for the messages, ending with the opening of the assistant's answer. Without BOS:
// the tokenizer adds it as it does for -p (encode with add_bos and special tokens parsed), so the
// same text given to `r1pi -p` is the same prompt. thinking: the template's enable_thinking
// (--reasoning, chat_template_kwargs); only Qwen3's reads it. reasoning_effort: low, medium or high
// (--reasoning-effort, the request's reasoning_effort; "" the template's default): harmony's system
// message. tools: the request's `tools`, for a template that renders them (template_tool_calls).
// Throws r1pi::Error for an unknown role, or tool turns or tools the template cannot show.
std::string render_chat(ChatTemplate t, const std::vector<ChatMessage>& messages, bool thinking = true,
                        std::string_view reasoning_effort = "", const nlohmann::ordered_json& tools = nullptr);
// The call syntax of a template that renders tools, their calls and results itself (harmony's),
// renders_tools set; nothing for the others, which show none of them.
std::optional<ToolCallFormat> template_tool_calls(ChatTemplate t);
// The levels of reasoning_effort harmony knows ("low, medium, high"), and whether one is.
bool known_reasoning_effort(std::string_view effort);
inline constexpr std::string_view kReasoningEfforts = "low, medium, high";

// render_chat() as token ids, BOS when the vocabulary wants one: the template's markers are
// control tokens, the messages' text is text even where it spells one (Tokenizer::mark_plain).
std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, ChatTemplate t, const std::vector<ChatMessage>& messages,
                                 bool thinking = true);

// Where the answer starts for the reasoning split: inside the reasoning after R1's prompt (it ends
// with "<think>\n"), at a "<think>" the answer may write itself with Qwen3's, on harmony's
// channels (gpt-oss), no reasoning else.
ReasoningStart answer_start(ChatTemplate t);

// Text that ends a turn when the model writes it as text rather than as its end-of-generation
// token (a vocabulary without "<|im_end|>" spells it in pieces).
std::vector<std::string> turn_end_strings(ChatTemplate t);

}  // namespace r1pi
