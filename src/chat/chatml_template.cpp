#include "chat/chatml_template.h"

#include "chat/think_block.h"

namespace r1pi {

namespace {

// Python's str.lstrip/rstrip('\n'), as Qwen3's template trims around its think block.
std::string_view lstrip_newlines(std::string_view s) {
  const size_t from = s.find_first_not_of('\n');
  return from == std::string_view::npos ? std::string_view() : s.substr(from);
}
std::string_view rstrip_newlines(std::string_view s) {
  const size_t last = s.find_last_not_of('\n');
  return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

std::string turn(std::string_view role, std::string_view text) {
  return "<|im_start|>" + std::string(role) + "\n" + std::string(text) + "<|im_end|>\n";
}

// The last user message that asks something: Qwen3's template does not count a tool's answer
// passed back as a user message ("<tool_response>...</tool_response>"). The last index when none.
size_t last_question(const std::vector<ChatMessage>& messages) {
  for (size_t i = messages.size(); i-- > 0;) {
    const std::string& text = messages[i].content;
    if (messages[i].role == "user" && !(text.starts_with("<tool_response>") && text.ends_with("</tool_response>")))
      return i;
  }
  return messages.size() - 1;
}

// An answer as Qwen3's template renders it: its reasoning (between the last "<think>" before the
// first "</think>" and that "</think>") is kept only after the last question, where the last
// answer always gets a block, empty or not.
std::string qwen3_answer(std::string_view text, bool after_last_question, bool last) {
  std::string_view content = text, reasoning;
  if (const size_t end = text.find(kThinkEnd); end != std::string_view::npos) {
    content = lstrip_newlines(after_last_think_end(text));
    const std::string_view before = rstrip_newlines(text.substr(0, end));
    const size_t start = before.rfind(kThinkStart);
    reasoning = lstrip_newlines(start == std::string_view::npos ? before : before.substr(start + kThinkStart.size()));
  }
  if (!after_last_question || (!last && reasoning.empty())) return std::string(content);
  return "<think>\n" + std::string(reasoning) + "\n</think>\n\n" + std::string(lstrip_newlines(content));
}

// Qwen3's soft switch: the latest "/think" or "/no_think" in a user or system message decides,
// as the model was trained to read it; no switch leaves thinking on.
bool switched_off(const std::vector<ChatMessage>& messages) {
  constexpr size_t npos = std::string::npos;
  for (size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == "assistant") continue;
    const size_t off = messages[i].content.rfind("/no_think"), on = messages[i].content.rfind("/think");
    if (off != npos || on != npos) return off != npos && (on == npos || off > on);
  }
  return false;
}

}  // namespace

std::string render_chatml(const ChatMLDialect& dialect, const std::vector<ChatMessage>& messages, bool thinking) {
  std::string out;
  if (!dialect.default_system.empty() && (messages.empty() || messages[0].role != "system"))
    out += turn("system", dialect.default_system);
  const size_t question = messages.empty() ? 0 : last_question(messages);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool answer = m.role == "assistant" && dialect.think_blocks;
    out += turn(m.role, answer ? qwen3_answer(m.content, i > question, i + 1 == messages.size()) : m.content);
  }
  out += "<|im_start|>assistant\n";
  // What Qwen3 writes itself when it does not think: the empty block, then the answer.
  if (dialect.think_blocks && (!thinking || switched_off(messages))) out += "<think>\n\n</think>\n\n";
  return out;
}

}  // namespace r1pi
