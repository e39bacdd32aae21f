#include "chat/chat_template.h"

#include <algorithm>
#include <array>

#include "chat/chatml_template.h"
#include "chat/harmony_template.h"
#include "chat/think_block.h"
#include "common/error.h"

namespace r1pi {

namespace {

std::string render_deepseek_r1(const std::vector<ChatMessage>& messages, bool) {
  // As the model's Jinja template: the last system message, unmarked, before every turn.
  std::string system, turns;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") system = m.content;
    else if (m.role == "user") turns += "<｜User｜>" + m.content;
    else turns += "<｜Assistant｜>" + std::string(after_last_think_end(m.content)) + "<｜end▁of▁sentence｜>";
  }
  return system + turns + "<｜Assistant｜><think>\n";
}

std::string render_llama3(const std::vector<ChatMessage>& messages, bool) {
  std::string out;
  for (const ChatMessage& m : messages)
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

struct TemplateRow {
  ChatTemplate kind;
  const char* name;
  std::array<std::string_view, 2> markers;  // all in the template text or the vocabulary ("": none)
  const char* turn_end;
  ReasoningStart answer_start;
  // Whether it renders tools, calls and results itself, in this call syntax (tool_call_format.h);
  // the others get the generic syntax, the tools listed in the system message.
  const char* tool_calls;
  std::string (*render)(const std::vector<ChatMessage>&, bool thinking, std::string_view effort,
                        const nlohmann::ordered_json& tools);
};
constexpr const char* kNoToolTurns = nullptr;

// In the order detection tries them: the more particular markers first.
constexpr TemplateRow kTemplates[] = {
    {ChatTemplate::Harmony, "harmony", {"<|channel|>", "<|message|>"}, "<|return|>", ReasoningStart::Harmony, "harmony",
     [](const std::vector<ChatMessage>& m, bool, std::string_view effort, const nlohmann::ordered_json& tools) {
       return render_harmony(m, effort, tools);
     }},
    {ChatTemplate::DeepSeekR1, "deepseek-r1", {"<｜Assistant｜>"}, "<｜end▁of▁sentence｜>", ReasoningStart::Inside,
     kNoToolTurns,
     [](const std::vector<ChatMessage>& m, bool thinking, std::string_view, const nlohmann::ordered_json&) {
       return render_deepseek_r1(m, thinking);
     }},
    {ChatTemplate::Llama3, "llama3", {"<|start_header_id|>"}, "<|eot_id|>", ReasoningStart::None,
     kNoToolTurns,
     [](const std::vector<ChatMessage>& m, bool thinking, std::string_view, const nlohmann::ordered_json&) {
       return render_llama3(m, thinking);
     }},
    {ChatTemplate::Qwen3, "qwen3", {"<|im_start|>", "<think>"}, "<|im_end|>", ReasoningStart::Opens,
     kNoToolTurns,
     [](const std::vector<ChatMessage>& m, bool thinking, std::string_view, const nlohmann::ordered_json&) {
       return render_chatml(kQwen3, m, thinking);
     }},
    {ChatTemplate::Qwen25, "qwen2.5", {"<|im_start|>", kQwen25.default_system}, "<|im_end|>", ReasoningStart::None,
     kNoToolTurns,
     [](const std::vector<ChatMessage>& m, bool thinking, std::string_view, const nlohmann::ordered_json&) {
       return render_chatml(kQwen25, m, thinking);
     }},
    {ChatTemplate::ChatML, "chatml", {"<|im_start|>"}, "<|im_end|>", ReasoningStart::None,
     kNoToolTurns,
     [](const std::vector<ChatMessage>& m, bool thinking, std::string_view, const nlohmann::ordered_json&) {
       return render_chatml(kChatML, m, thinking);
     }},
};

const TemplateRow& row(ChatTemplate t) {
  for (const TemplateRow& r : kTemplates)
    if (r.kind == t) return r;
  throw Error("unknown chat template");
}

std::optional<ChatTemplate> template_with_markers(const auto& has) {
  for (const TemplateRow& r : kTemplates)
    if (std::ranges::all_of(r.markers, [&](std::string_view m) { return m.empty() || has(m); })) return r.kind;
  return std::nullopt;
}

}  // namespace

std::optional<ChatTemplate> chat_template_named(std::string_view name) {
  for (const TemplateRow& r : kTemplates)
    if (name == r.name) return r.kind;
  return std::nullopt;
}

std::string chat_template_name(ChatTemplate t) { return row(t).name; }

std::string chat_template_names() {
  std::string out;
  for (const TemplateRow& r : kTemplates) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

ChatTemplate detect_chat_template(const Tokenizer& tokenizer) {
  const std::string& text = tokenizer.vocab().chat_template;
  if (auto t = template_with_markers([&](std::string_view m) { return text.find(m) != std::string::npos; }))
    return *t;
  if (auto t = template_with_markers([&](std::string_view m) { return tokenizer.find_token(m).has_value(); }))
    return *t;
  return ChatTemplate::ChatML;
}

bool known_chat_role(std::string_view role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" || role == "tool";
}

bool known_reasoning_effort(std::string_view effort) { return effort == "low" || effort == "medium" || effort == "high"; }

std::optional<ToolCallFormat> template_tool_calls(ChatTemplate t) {
  if (row(t).tool_calls == kNoToolTurns) return std::nullopt;
  ToolCallFormat format = tool_call_format_named(row(t).tool_calls);
  format.renders_tools = true;
  return format;
}

std::string render_chat(ChatTemplate t, const std::vector<ChatMessage>& messages, bool thinking,
                        std::string_view reasoning_effort, const nlohmann::ordered_json& tools) {
  if (!reasoning_effort.empty() && !known_reasoning_effort(reasoning_effort))
    throw Error("reasoning effort '" + std::string(reasoning_effort) + "': give one of " + std::string(kReasoningEfforts));
  // The named templates know three roles: a developer message is the system's (OpenAI's newer
  // name for it); tool calls and results need the model's own template, or one that renders them.
  std::vector<ChatMessage> plain = messages;
  for (ChatMessage& m : plain) {
    if (m.role == "developer") m.role = "system";
    if (row(t).tool_calls != kNoToolTurns && m.role == "tool") continue;
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      throw Error("the " + chat_template_name(t) + " template has no '" + m.role +
                  "' role (give system, user or assistant, or use the model's own template)");
    if (!m.tool_calls.empty() && row(t).tool_calls == kNoToolTurns)
      throw Error("the " + chat_template_name(t) + " template cannot show an assistant's tool calls "
                  "(use the model's own template)");
  }
  if (!tools.is_null() && !tools.empty() && row(t).tool_calls == kNoToolTurns)
    throw Error("the " + chat_template_name(t) + " template does not list tools (give them in the system message)");
  return row(t).render(plain, thinking, reasoning_effort, tools);
}

std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, ChatTemplate t, const std::vector<ChatMessage>& messages,
                                 bool thinking) {
  // The messages' text is the users': only the template's own markers are control tokens.
  std::vector<ChatMessage> marked = messages;
  for (ChatMessage& m : marked) {
    m.content = tokenizer.mark_plain(m.content);
    m.reasoning_content = tokenizer.mark_plain(m.reasoning_content);
  }
  return tokenizer.encode(render_chat(t, marked, thinking), tokenizer.add_bos(), true);
}

ReasoningStart answer_start(ChatTemplate t) { return row(t).answer_start; }

std::vector<std::string> turn_end_strings(ChatTemplate t) { return {row(t).turn_end}; }

}  // namespace r1pi
