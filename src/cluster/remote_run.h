// Running a command on a board over ssh, as r1pi-cluster does: the command's stdout, its stderr
// and its exit status (255: ssh itself failed).
#pragma once
#include <string>

namespace r1pi {

struct RemoteResult {
  int status = -1;  // the command's exit status; 255 when ssh could not reach the board or log in
  std::string out, err;
};

// `ssh HOST COMMAND` (ssh: the command words, e.g. "ssh -o BatchMode=yes"), stdin from
// stdin_path ("" for none).
RemoteResult run_remote(const std::string& ssh, const std::string& host, const std::string& command,
                        const std::string& stdin_path = "");

// Throws r1pi::Error when the ssh command's program is neither on PATH nor at the path given.
void require_ssh_client(const std::string& ssh);

// The steps that let this machine log in to host over ssh without a question.
std::string ssh_setup_fix(const std::string& host);

// text in single quotes for a POSIX shell.
std::string shell_quote(const std::string& text);

// The last line of text, without its line end.
std::string last_line(const std::string& text);

}  // namespace r1pi
