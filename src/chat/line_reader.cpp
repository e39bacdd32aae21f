#include "chat/line_reader.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace r1pi {

LineReader::LineReader() : interactive_(isatty(STDIN_FILENO) == 1) {
  // The chat's own SIGINT handler stops an answer; libedit must not install one that ends the process.
  rl_catch_signals = 0;
}

std::optional<std::string> LineReader::read(const char* prompt) {
  if (!interactive_) {
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }
  char* raw = readline(prompt);
  if (!raw) return std::nullopt;
  std::string line(raw);
  std::free(raw);
  if (!line.empty()) add_history(line.c_str());
  return line;
}

}  // namespace r1pi
