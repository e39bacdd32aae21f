// Lines typed at the chat: libedit's line editing and history on a terminal, plain lines from a
// pipe (a script feeding the chat gets no prompts or escape sequences in its output).
#pragma once
#include <optional>
#include <string>

namespace r1pi {

class LineReader {
 public:
  LineReader();
  // The next line without its newline; nothing at end of input (Ctrl-D).
  std::optional<std::string> read(const char* prompt);
  bool interactive() const { return interactive_; }

 private:
  bool interactive_;
};

}  // namespace r1pi
