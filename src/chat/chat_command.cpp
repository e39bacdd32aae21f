#include "chat/chat_command.h"

namespace r1pi {

const char* const kChatCommands =
    "/reset starts over, /stats shows the last turn's numbers, /help this list, /quit or /exit or Ctrl-D "
    "ends; a message that begins with / is typed with //";

namespace {

constexpr std::string_view kSpace = " \t\r\n\v\f";

struct Command {
  std::string_view name;
  ChatInput::Kind kind;
};
constexpr Command kCommandNames[] = {{"/quit", ChatInput::Kind::Quit},   {"/exit", ChatInput::Kind::Quit},
                                     {"/reset", ChatInput::Kind::Reset}, {"/stats", ChatInput::Kind::Stats},
                                     {"/help", ChatInput::Kind::Help}};

ChatInput refused(std::string why) {
  return {ChatInput::Kind::Refused, why + "; commands: " + kChatCommands};
}

}  // namespace

ChatInput read_chat_input(std::string_view line) {
  const size_t first = line.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const std::string_view text = line.substr(first, line.find_last_not_of(kSpace) + 1 - first);
  if (text.front() != '/') return {ChatInput::Kind::Message, std::string(text)};
  if (text.starts_with("//")) return {ChatInput::Kind::Message, std::string(text.substr(1))};
  const size_t name_end = text.find_first_of(kSpace);
  const std::string_view name = text.substr(0, name_end);
  for (const Command& command : kCommandNames) {
    if (name != command.name) continue;
    if (name_end == std::string_view::npos) return {command.kind, {}};
    return refused(std::string(name) + " takes nothing after it");
  }
  return refused("unknown command " + std::string(name));
}

}  // namespace r1pi
