// Lines typed at the chat: libedit's line editing and history on a terminal, plain lines from a
// pipe (a script feeding the chat gets no prompts or escape sequences in its output).
#pragma once
#include <clocale>
#include <optional>
#include <string>

namespace r1pi {

struct ReadLine {
  std::string text;            // without its line break
  bool pasted_break = false;   // it ended at a line break inside a paste, which goes on in the next read
};

class LineReader {
 public:
  LineReader();
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line; nothing at end of input (Ctrl-D, or Ctrl-C at the prompt).
  std::optional<ReadLine> read(const char* prompt);
  // Keeps a whole input (all its lines) in the history, for the up arrow.
  void remember(const std::string& input);
  bool interactive() const { return interactive_; }

 private:
  bool interactive_;
  locale_t utf8_ = locale_t(0);  // the editor's LC_CTYPE; 0 when the system has no UTF-8 locale
};

}  // namespace r1pi
