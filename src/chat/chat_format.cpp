#include "chat/chat_format.h"

#include <cstdio>

#include "common/error.h"
#include "common/whole_file.h"

namespace r1pi {

using nlohmann::ordered_json;

namespace {

std::string token_text(const Tokenizer& t, int32_t id) {
  return id >= 0 && size_t(id) < t.vocab().tokens.size() ? t.vocab().tokens[size_t(id)] : std::string();
}

// A message as transformers' callers give it: OpenAI's shape, tool-call arguments as objects.
ordered_json message_json(const ChatMessage& m) {
  ordered_json j = {{"role", m.role}};
  // A tool-call turn without text as "" (llama.cpp does the same), not OpenAI's null: Qwen's
  // templates look for "</think>" in every assistant's content, which null would fail.
  j["content"] = m.content;
  if (!m.reasoning_content.empty()) j["reasoning_content"] = m.reasoning_content;
  if (!m.tool_calls.empty()) {
    ordered_json calls = ordered_json::array();
    for (const ToolCall& c : m.tool_calls) {
      ordered_json args = ordered_json::parse(c.arguments, nullptr, false);
      if (args.is_discarded()) args = c.arguments;
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
    }
    j["tool_calls"] = calls;
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) j["name"] = m.name;
  return j;
}

// The messages with the tools listed in the system message, for a template that does not render
// tools itself (the generic call format).
std::vector<ChatMessage> with_tools_in_system(const ChatFormat& f, const PromptInput& in) {
  std::vector<ChatMessage> out = in.messages;
  const std::string text = tools_system_text(f.tool_calls, in.tools, in.parallel_tool_calls);
  if (!out.empty() && (out[0].role == "system" || out[0].role == "developer")) out[0].content += "\n\n" + text;
  else out.insert(out.begin(), ChatMessage{.role = "system", .content = text});
  return out;
}

}  // namespace

ChatFormat chat_format_for(const ChatOptions& options, const Tokenizer& tokenizer) {
  ChatFormat f{chosen_template(options, tokenizer), nullptr, "", "", {}};
  std::string source = tokenizer.vocab().chat_template;
  f.origin = "the model's template";
  if (!options.template_file.empty()) {
    source = read_whole_file(options.template_file, "--chat-template-file");
    f.origin = "--chat-template-file " + options.template_file;
  } else if (!options.template_name.empty()) {
    source.clear();  // the named template was asked for
  }
  // A named template's own call syntax where it renders tools (harmony), else the generic one.
  const ToolCallFormat named_calls = template_tool_calls(f.family).value_or(tool_call_format_named("generic"));
  f.tool_calls = source.empty() ? named_calls : detect_tool_call_format(source);
  if (source.empty()) {
    f.origin = chat_template_name(f.family);
    return f;
  }
  try {
    f.jinja = std::make_shared<const jinja::Template>(source);
    f.source = source;
  } catch (const jinja::Error& e) {
    if (!options.template_file.empty()) throw Error("--chat-template-file " + options.template_file + ": " + e.what());
    std::fprintf(stderr, "warning: the model's chat template cannot be read (%s): using the %s template\n", e.what(),
                 chat_template_name(f.family).c_str());
    f.origin = chat_template_name(f.family);
    f.tool_calls = named_calls;
  }
  return f;
}

std::string render_chat_prompt(const ChatFormat& f, const Tokenizer& tokenizer, const PromptInput& in, bool mark) {
  const bool tools = !in.tools.is_null() && !in.tools.empty();
  std::vector<ChatMessage> messages = tools && !f.tool_calls.renders_tools ? with_tools_in_system(f, in) : in.messages;
  if (mark)
    for (ChatMessage& m : messages) {
      m.content = tokenizer.mark_plain(m.content);
      m.reasoning_content = tokenizer.mark_plain(m.reasoning_content);
    }
  // OpenAI's newer name for the system role, for templates that do not know it (Qwen's would
  // drop the message).
  if (f.source.find("developer") == std::string::npos)
    for (ChatMessage& m : messages)
      if (m.role == "developer") m.role = "system";
  if (!f.jinja) {
    // Most named templates have no tool turns: earlier calls and results read as text.
    if (!f.tool_calls.renders_tools)
      for (ChatMessage& m : messages) {
        if (!m.tool_calls.empty()) {
          m.content += render_tool_calls(f.tool_calls, m.tool_calls, true);
          m.tool_calls.clear();
        }
        if (m.role == "tool") m.role = "user";
      }
    const auto effort = in.kwargs.find("reasoning_effort");
    return render_chat(f.family, messages, in.thinking.value_or(true),
                       effort != in.kwargs.end() && effort->is_string() ? effort->get<std::string>() : "",
                       f.tool_calls.renders_tools ? in.tools : nullptr);
  }
  ordered_json vars = ordered_json::object();
  for (const auto& [key, value] : in.kwargs.items()) vars[key] = value;
  ordered_json list = ordered_json::array();
  for (const ChatMessage& m : messages) {
    list.push_back(message_json(m));
    // gpt-oss's template reads a turn's reasoning as `thinking` (llama.cpp passes it so too).
    if (f.family == ChatTemplate::Harmony && !m.reasoning_content.empty()) list.back()["thinking"] = m.reasoning_content;
  }
  vars["messages"] = list;
  if (tools && f.tool_calls.renders_tools) vars["tools"] = in.tools;
  vars["add_generation_prompt"] = in.add_generation_prompt;
  vars["bos_token"] = token_text(tokenizer, tokenizer.bos_id());
  vars["eos_token"] = token_text(tokenizer, tokenizer.eos_id());
  if (in.thinking && !vars.contains("enable_thinking")) vars["enable_thinking"] = *in.thinking;
  return f.jinja->render(vars);
}

std::vector<int32_t> encode_chat_prompt(const ChatFormat& f, const Tokenizer& tokenizer, const PromptInput& in) {
  std::string text = render_chat_prompt(f, tokenizer, in, true);
  if (!f.jinja) return tokenizer.encode(text, tokenizer.add_bos(), true);
  // A template that writes BOS itself: the tokenizer's is the one kept.
  const std::string bos = token_text(tokenizer, tokenizer.bos_id());
  if (tokenizer.add_bos() && !bos.empty() && text.starts_with(bos)) text.erase(0, bos.size());
  return tokenizer.encode(text, tokenizer.add_bos(), true);
}

}  // namespace r1pi
