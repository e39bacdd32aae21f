#include "cluster/remote_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace r1pi {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

void require_ssh_client(const std::string& ssh) {
  const std::string program = ssh.substr(0, ssh.find(' '));
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return;
  } else {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return;
  }
  throw Error("no ssh client: '" + program + "' is not on PATH (apt install openssh-client, or --ssh COMMAND)");
}

std::string ssh_setup_fix(const std::string& host) {
  return "ssh-keygen -t ed25519 (once, if ~/.ssh has no key), ssh-copy-id " + host + ", then `ssh " + host +
         " true` must return without a question (answer the host-key question once)";
}

RemoteResult run_remote(const std::string& ssh, const std::string& host, const std::string& command,
                        const std::string& stdin_path) {
  RemoteResult r;
  char err_path[] = "/tmp/r1pi-cluster-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) {
    r.err = "cannot make a temporary file";
    return r;
  }
  close(fd);
  const std::string line = ssh + " " + shell_quote(host) + " " + shell_quote(command) + " 2>" + err_path + " <" +
                           (stdin_path.empty() ? std::string("/dev/null") : shell_quote(stdin_path));
  if (FILE* pipe = popen(line.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
    const int status = pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  r.err = text.str();
  unlink(err_path);
  return r;
}

}  // namespace r1pi
