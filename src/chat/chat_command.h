// What is typed at the terminal chat: the lines that make one input (a message may take several),
// and what an input asks for: a message for the model or one of the chat's own commands. Plain
// text in, so that the rules are tested without a terminal.
#pragma once
#include <string>
#include <string_view>
#include <utility>

namespace r1pi {

// The lines of one input. A line that ends with '\' goes on in the next one (the '\' becomes a line
// break), as llama.cpp's; an input that starts with """ goes on until a line ends with """ (its
// lines as they are, a '\' at the end included); a line that ended at a line break inside a paste
// goes on (the paste is one message: the Enter typed after it sends it). A CR at the end of a line
// (CRLF input) is not part of it.
class ChatInputLines {
 public:
  // Takes the next line read; true when the input is whole (take() gives it).
  bool add(std::string_view line, bool pasted_break);
  // Lines are taken: the next prompt asks for more.
  bool open() const { return !text_.empty(); }
  std::string take() { return std::exchange(text_, {}); }

 private:
  std::string text_;
};

struct ChatInput {
  enum class Kind { Nothing, Message, Quit, Reset, Stats, Help, Refused };
  Kind kind = Kind::Nothing;
  std::string text;  // Message: what goes to the model; Refused: why, for the person typing
};

// A whole input with white space at both ends removed (a trailing space, the line breaks around a
// paste). A """ block is a message (what lies between the quotes, trimmed), whatever it starts
// with. Otherwise an input that starts with '/' is a command and never goes to the model: only a
// command's exact name counts, anything else (an unknown name, words after the name) is refused
// with the list of commands. "//" at the start sends the rest, with one '/', as a message.
ChatInput read_chat_input(std::string_view input);

// The commands, for the banner and /help.
extern const char* const kChatCommands;
// How a message of several lines is typed, for /help.
extern const char* const kChatMultilineHelp;

}  // namespace r1pi
