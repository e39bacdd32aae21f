#include "chat/chat_command.h"

namespace r1pi {

const char* const kChatCommands =
    "/reset starts over, /stats shows the last turn's numbers, /help this list, /quit or /exit or Ctrl-D "
    "ends; a message that begins with / is typed with //";

const char* const kChatMultilineHelp =
    "a message of several lines: end a line with \\ to go on in the next, or put the lines between two "
    "\"\"\" (a \"\"\" at the start of the first, one at the end of the last); a paste is one message, "
    "sent by the Enter after it";

namespace {

constexpr std::string_view kSpace = " \t\r\n\v\f";
constexpr std::string_view kBlockQuote = "\"\"\"";

struct Command {
  std::string_view name;
  ChatInput::Kind kind;
};
constexpr Command kCommandNames[] = {{"/quit", ChatInput::Kind::Quit},   {"/exit", ChatInput::Kind::Quit},
                                     {"/reset", ChatInput::Kind::Reset}, {"/stats", ChatInput::Kind::Stats},
                                     {"/help", ChatInput::Kind::Help}};

std::string_view trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) + 1 - first);
}

// Whether the text starts a """ block and whether that block is closed: a """ at the end that is
// not the opening one.
bool opens_block(std::string_view text) { return trimmed(text).starts_with(kBlockQuote); }
bool closed_block(std::string_view text) {
  const std::string_view t = trimmed(text);
  return t.size() >= 2 * kBlockQuote.size() && t.ends_with(kBlockQuote);
}

ChatInput refused(std::string why) {
  return {ChatInput::Kind::Refused, why + "; commands: " + kChatCommands};
}

// An input that starts with '/' (not "//"): one of the commands, or refused.
ChatInput command(std::string_view text) {
  const size_t name_end = text.find_first_of(kSpace);
  const std::string_view name = text.substr(0, name_end);
  for (const Command& command : kCommandNames) {
    if (name != command.name) continue;
    if (name_end == std::string_view::npos) return {command.kind, {}};
    return refused(std::string(name) + " takes nothing after it");
  }
  return refused("unknown command " + std::string(name));
}

}  // namespace

bool ChatInputLines::add(std::string_view line, bool pasted_break) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  text_ += line;
  if (pasted_break) {
    text_ += '\n';
    return false;
  }
  if (opens_block(text_)) {
    if (closed_block(text_)) return true;
    text_ += '\n';
    return false;
  }
  const size_t last = text_.find_last_not_of(kSpace);
  if (last == std::string::npos || text_[last] != '\\') return true;
  text_.resize(last);
  text_ += '\n';
  return false;
}

ChatInput read_chat_input(std::string_view input) {
  std::string_view text = trimmed(input);
  if (opens_block(text) && closed_block(text))
    text = trimmed(text.substr(kBlockQuote.size(), text.size() - 2 * kBlockQuote.size()));
  else if (text.starts_with("//"))
    text.remove_prefix(1);
  else if (text.starts_with('/'))
    return command(text);
  if (text.empty()) return {};
  return {ChatInput::Kind::Message, std::string(text)};
}

}  // namespace r1pi
