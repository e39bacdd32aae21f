#include "chat/line_reader.h"

#include <editline/readline.h>
#include <fcntl.h>
#include <langinfo.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "chat/terminal_keys.h"

namespace r1pi {

namespace {

TerminalKeys& terminal_keys() {
  static TerminalKeys keys([] {
    unsigned char byte;
    return read(STDIN_FILENO, &byte, 1) == 1 ? int(byte) : -1;
  });
  return keys;
}

// One key for libedit (terminal_keys.h), which otherwise reads the terminal itself: it would decode
// the bytes with the locale (see UTF-8 LC_CTYPE below) and knows nothing of bracketed pastes. NUL
// bytes are skipped: a Ctrl-D typed while an answer is printed (the terminal in its line mode,
// nobody reading) is kept by the kernel as an end-of-file mark, which reaches the next prompt, read
// in libedit's character mode, as a NUL byte; libedit binds NUL to quoted-insert (the terminal's
// disabled "literal next" character is 0), so the Ctrl-D typed at that prompt was inserted as a
// character instead of ending the chat (Ctrl-@, also NUL, means nothing at the chat). -1 (the end
// of the chat) at end of input, on an error, or when a signal (Ctrl-C at the prompt) interrupts
// the read, as libedit's own reading did.
int read_key(FILE*) { return terminal_keys().next(); }

// libedit keeps the line in wide characters and converts, measures and shows them with the C
// library (mbrtowc, wcrtomb, wcwidth, iswprint), which follow LC_CTYPE: in the "C" locale every
// program starts in, all that is not ASCII is invalid and dropped ("héllo" became "hllo"). The
// chat's text is UTF-8 whatever LANG or LC_ALL say, so the editor gets a UTF-8 LC_CTYPE: C.UTF-8
// (in every glibc since 2.35, and Debian's before), else the user's own if it is UTF-8. Only the
// thread reading the line uses it, and only while it edits (uselocale), so nothing else sees
// another locale: printf keeps its '.', the tokenizer its character classes.
locale_t utf8_ctype() {
  for (const char* name : {"C.UTF-8", ""}) {
    const locale_t locale = newlocale(LC_CTYPE_MASK, name, locale_t(0));
    if (locale && std::string_view(nl_langinfo_l(CODESET, locale)) == "UTF-8") return locale;
    if (locale) freelocale(locale);
  }
  std::fputs("chat: no UTF-8 locale (C.UTF-8) on this system: only ASCII can be typed\n", stderr);
  return locale_t(0);
}

// The editor's locale for the time of a call into libedit.
class EditorLocale {
 public:
  explicit EditorLocale(locale_t locale) : before_(locale ? uselocale(locale) : locale_t(0)) {}
  ~EditorLocale() {
    if (before_) uselocale(before_);
  }
  EditorLocale(const EditorLocale&) = delete;
  EditorLocale& operator=(const EditorLocale&) = delete;

 private:
  locale_t before_;
};

// Bracketed paste: while it is on, the terminal wraps a paste in kPasteStart and kPasteEnd. It is
// on only while a line is read (as bash's readline does), so that whatever ends the chat, at the
// prompt (Ctrl-C, Ctrl-D) or elsewhere, leaves the terminal as it found it. Asked through stdout,
// where libedit draws too, when that is a terminal (not a file the chat's output is saved in).
void set_bracketed_paste(bool on) {
  if (isatty(STDOUT_FILENO) != 1) return;
  std::fputs(on ? "\x1b[?2004h" : "\x1b[?2004l", stdout);
  std::fflush(stdout);
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
  utf8_ = utf8_ctype();
  EditorLocale locale(utf8_);
  // The chat's own SIGINT handler stops an answer; libedit must not install one that ends the process.
  rl_catch_signals = 0;
  rl_getc_function = read_key;  // taken by rl_initialize
  rl_initialize();
  rl_bind_key('\t', rl_insert);  // a tab is text (pasted code), not file name completion
}

LineReader::~LineReader() {
  if (utf8_) freelocale(utf8_);
}

std::optional<ReadLine> LineReader::read(const char* prompt) {
  if (!interactive_) {
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return ReadLine{std::move(line)};
  }
  EditorLocale locale(utf8_);
  set_bracketed_paste(true);
  char* raw = readline(prompt);
  set_bracketed_paste(false);
  if (!raw) return std::nullopt;
  ReadLine line{raw, terminal_keys().last_was_paste_break()};
  std::free(raw);
  return line;
}

void LineReader::remember(const std::string& input) {
  if (!interactive_ || input.find_first_not_of(" \t\r\n") == std::string::npos) return;
  EditorLocale locale(utf8_);
  add_history(input.c_str());
}

}  // namespace r1pi
