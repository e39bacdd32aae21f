// What a line typed at the terminal chat asks for: a message for the model or one of the chat's
// own commands. Plain text in, so that the rules are tested without a terminal.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

struct ChatInput {
  enum class Kind { Nothing, Message, Quit, Reset, Stats, Help, Refused };
  Kind kind = Kind::Nothing;
  std::string text;  // Message: what goes to the model; Refused: why, for the person typing
};

// The line read with white space at both ends removed (a CR from CRLF input, a trailing space).
// A line that starts with '/' is a command and never goes to the model: only a command's exact
// name counts, anything else (an unknown name, words after the name) is refused with the list of
// commands. "//" at the start sends the rest of the line, with one '/', as a message.
ChatInput read_chat_input(std::string_view line);

// The commands, for the banner and /help.
extern const char* const kChatCommands;

}  // namespace r1pi
