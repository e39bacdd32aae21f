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

// Whether the ssh command's program can be run (on PATH, or the path given).
bool ssh_client_exists(const std::string& ssh);

// text in single quotes for a POSIX shell.
std::string shell_quote(const std::string& text);

// The last line of text, without its line end.
std::string last_line(const std::string& text);

}  // namespace r1pi
