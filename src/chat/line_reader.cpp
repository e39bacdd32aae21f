#include "chat/line_reader.h"

#include <editline/readline.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <iostream>

namespace r1pi {

namespace {

// One key for libedit: its own reading of the terminal, less NUL bytes. A Ctrl-D typed while an
// answer is printed (the terminal in its line mode, nobody reading) is kept by the kernel as an
// end-of-file mark, which reaches the next prompt, read in libedit's character mode, as a NUL byte;
// libedit binds NUL to quoted-insert (the terminal's disabled "literal next" character is 0), so
// the Ctrl-D typed at that prompt was inserted as a character instead of ending the chat. Skipping
// NUL here drops that mark (and Ctrl-@, which means nothing at the chat). The rest is what libedit
// does: a character of the locale's encoding, read one byte at a time (so nothing is taken from
// the terminal beyond the key), invalid bytes dropped; -1 (the end of the chat) at end of input, on
// an error, or when a signal (Ctrl-C at the prompt) interrupts the read, as libedit's reading did.
int read_key(FILE*) {
  char bytes[MB_LEN_MAX];
  size_t n = 0;
  for (;;) {
    char byte;
    if (read(STDIN_FILENO, &byte, 1) != 1) return -1;
    if (byte == '\0' && n == 0) continue;
    bytes[n++] = byte;
    wchar_t key;
    std::mbstate_t state{};
    const size_t used = std::mbrtowc(&key, bytes, n, &state);
    if (used == size_t(-2) && n < sizeof bytes) continue;  // more bytes of this character
    if (used == size_t(-1) || used == size_t(-2)) {
      n = 0;
      continue;
    }
    return int(key);
  }
}

// Under mpirun rank 0's stdin is a pipe from mpirun, or /dev/null with `mpirun --stdin none`
// (scripts/mpirun adds it for a chat typed at a terminal). A rank started by mpirun on this machine
// still has the terminal mpirun runs in as its controlling terminal: with stdin /dev/null the chat
// reads /dev/tty itself, with its prompt and line editing (the answer and the prompt both still go
// through stdout, mpirun's copy, so they stay in order). Piped into mpirun, it says what to pass.
void use_the_terminal_under_mpirun() {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") || isatty(STDIN_FILENO) == 1) return;
  struct stat in {}, null {};
  if (fstat(STDIN_FILENO, &in) != 0) return;
  const bool from_null = stat("/dev/null", &null) == 0 && S_ISCHR(in.st_mode) && in.st_rdev == null.st_rdev;
  const int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (tty < 0) return;  // no terminal (a remote rank 0, a test): read the pipe
  if (from_null) {
    // mpirun starts its ranks in a process group of their own, in the background of the terminal:
    // the editor's terminal settings would stop rank 0 (SIGTTOU) and its reads would fail. Rank 0
    // takes the foreground (the same session allows it); the shell takes it back when mpirun ends.
    // A Ctrl-C then reaches rank 0's group, which stops the answer, instead of ending the job.
    std::signal(SIGTTOU, SIG_IGN);
    tcsetpgrp(tty, getpgrp());
    dup2(tty, STDIN_FILENO);
  } else if (S_ISFIFO(in.st_mode))
    std::fputs("chat: reading mpirun's pipe; for a prompt and line editing start it with mpirun --stdin none "
               "(scripts/mpirun does)\n", stderr);
  close(tty);
}

}  // namespace

LineReader::LineReader() : interactive_((use_the_terminal_under_mpirun(), isatty(STDIN_FILENO) == 1)) {
  if (!interactive_) return;
  // The chat's own SIGINT handler stops an answer; libedit must not install one that ends the process.
  rl_catch_signals = 0;
  rl_getc_function = read_key;  // taken by rl_initialize
  rl_initialize();
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
