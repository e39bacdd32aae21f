#include "chat/chat_template.h"

#include "common/error.h"

namespace r1pi {

namespace {

constexpr std::string_view kThinkEnd = "</think>";

struct Named {
  const char* name;
  ChatTemplate kind;
};
constexpr Named kNames[] = {
    {"deepseek-r1", ChatTemplate::DeepSeekR1}, {"llama3", ChatTemplate::Llama3}, {"chatml", ChatTemplate::ChatML}};

// The marker each template is recognised by, in the template text or as a vocabulary token.
std::optional<ChatTemplate> template_with_marker(const auto& has) {
  if (has("<｜Assistant｜>")) return ChatTemplate::DeepSeekR1;
  if (has("<|start_header_id|>")) return ChatTemplate::Llama3;
  if (has("<|im_start|>")) return ChatTemplate::ChatML;
  return std::nullopt;
}

// An earlier answer as R1's template keeps it: the text after the last "</think>".
std::string without_reasoning(const std::string& content) {
  const size_t end = content.rfind(kThinkEnd);
  return end == std::string::npos ? content : content.substr(end + kThinkEnd.size());
}

std::string render_deepseek_r1(const std::vector<ChatMessage>& messages) {
  // As the model's Jinja template: the last system message, unmarked, before every turn.
  std::string system, turns;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") system = m.content;
    else if (m.role == "user") turns += "<｜User｜>" + m.content;
    else turns += "<｜Assistant｜>" + without_reasoning(m.content) + "<｜end▁of▁sentence｜>";
  }
  return system + turns + "<｜Assistant｜><think>\n";
}

std::string render_llama3(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages)
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

std::string render_chatml(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  return out + "<|im_start|>assistant\n";
}

}  // namespace

std::optional<ChatTemplate> chat_template_named(std::string_view name) {
  for (const Named& n : kNames)
    if (name == n.name) return n.kind;
  return std::nullopt;
}

std::string chat_template_name(ChatTemplate t) {
  for (const Named& n : kNames)
    if (n.kind == t) return n.name;
  return "?";
}

std::string chat_template_names() {
  std::string out;
  for (const Named& n : kNames) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

ChatTemplate detect_chat_template(const Tokenizer& tokenizer) {
  const std::string& text = tokenizer.vocab().chat_template;
  if (auto t = template_with_marker([&](std::string_view m) { return text.find(m) != std::string::npos; }))
    return *t;
  if (auto t = template_with_marker([&](std::string_view m) { return tokenizer.find_token(m).has_value(); }))
    return *t;
  return ChatTemplate::ChatML;
}

bool known_chat_role(std::string_view role) {
  return role == "system" || role == "user" || role == "assistant";
}

std::string render_chat(ChatTemplate t, const std::vector<ChatMessage>& messages) {
  for (const ChatMessage& m : messages)
    if (!known_chat_role(m.role))
      throw Error("unknown chat role '" + m.role + "' (give system, user or assistant)");
  switch (t) {
    case ChatTemplate::DeepSeekR1: return render_deepseek_r1(messages);
    case ChatTemplate::Llama3: return render_llama3(messages);
    case ChatTemplate::ChatML: return render_chatml(messages);
  }
  return {};
}

std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, ChatTemplate t, const std::vector<ChatMessage>& messages) {
  return tokenizer.encode(render_chat(t, messages), tokenizer.add_bos(), true);
}

std::vector<std::string> turn_end_strings(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::DeepSeekR1: return {"<｜end▁of▁sentence｜>"};
    case ChatTemplate::Llama3: return {"<|eot_id|>"};
    case ChatTemplate::ChatML: return {"<|im_end|>"};
  }
  return {};
}

}  // namespace r1pi
