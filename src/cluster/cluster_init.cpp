#include "cluster/cluster_init.h"

#include <cstdio>
#include <future>

#include "cluster/file_sha256.h"
#include "cluster/remote_run.h"
#include "common/atomic_file.h"
#include "common/error.h"

namespace r1pi {

namespace {

constexpr const char* kPrograms[] = {"r1pi", "r1pi-cluster"};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// This machine's Open MPI ("mpirun (Open MPI) 4.1.4"), "" without one.
std::string local_mpi_version() {
  std::string out;
  if (FILE* pipe = popen("mpirun --version 2>/dev/null", "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    pclose(pipe);
  }
  return first_line(out);
}

struct Board {
  std::string host;
  bool ready = true;
  std::string text;
};

void fail(Board& b, const std::string& what, const std::string& fix) {
  b.ready = false;
  b.text += "  fail: " + what + "\n  fix: " + fix + "\n";
}

Board prepare(const InitOptions& o, const std::string& host, const std::string& mpi_version) {
  Board b{host, true, ""};
  const RemoteResult reach = run_remote(o.ssh, host, "true");
  if (reach.status != 0) {
    fail(b, "ssh: " + last_line(reach.err), ssh_setup_fix(host));
    b.text = host + ": not reachable\n" + b.text;
    return b;
  }
  std::string done = "reachable";
  const RemoteResult mpi = run_remote(o.ssh, host, "mpirun --version");
  const std::string theirs = mpi.status == 0 ? first_line(mpi.out) : "";
  if (theirs.empty())
    fail(b, "no Open MPI there (mpirun --version: " + last_line(mpi.err) + ")", "sudo apt install openmpi-bin on " + host);
  else if (theirs != mpi_version)
    fail(b, "'" + theirs + "' there, '" + mpi_version + "' here",
         "the same Open MPI everywhere: the same OS release and `sudo apt install openmpi-bin` on every board");
  else
    done += ", " + theirs;
  for (const char* program : kPrograms) {
    const std::string path = o.bin_dir + "/" + program, mine = file_sha256(path);
    const std::string command = "sha256sum " + shell_quote(path);
    if (first_line(run_remote(o.ssh, host, command).out).substr(0, 64) == mine) {
      done += std::string(", ") + program + " the same";
      continue;
    }
    const std::string temporary = o.bin_dir + "/." + program + ".r1pi-cluster-copy";
    const RemoteResult copy = run_remote(o.ssh, host,
                                         "mkdir -p " + shell_quote(o.bin_dir) + " && cat > " + shell_quote(temporary) +
                                             " && chmod 755 " + shell_quote(temporary) + " && mv -f " +
                                             shell_quote(temporary) + " " + shell_quote(path),
                                         path);
    if (copy.status != 0 || first_line(run_remote(o.ssh, host, command).out).substr(0, 64) != mine) {
      fail(b, std::string("copying ") + program + " to " + path + " failed: " + last_line(copy.err),
           "make " + o.bin_dir + " writable there, or copy it by hand: rsync -a " + path + " " + host + ":" + o.bin_dir + "/");
      continue;
    }
    done += std::string(", ") + program + " copied";
  }
  b.text = host + ": " + done + "\n" + b.text;
  return b;
}

}  // namespace

InitReport init_cluster(const InitOptions& o) {
  require_ssh_client(o.ssh);
  for (const char* program : kPrograms)
    if (file_sha256(o.bin_dir + "/" + program).empty())
      throw Error(o.bin_dir + "/" + program + " cannot be read: init copies the r1pi beside r1pi-cluster");
  const std::string mpi_version = local_mpi_version();
  if (mpi_version.empty()) throw Error("no Open MPI here (mpirun --version): sudo apt install openmpi-bin");
  std::vector<std::future<Board>> running;
  for (const std::string& host : o.hosts) running.push_back(std::async(std::launch::async, prepare, o, host, mpi_version));
  InitReport report;
  bool ready = true;
  for (auto& r : running) {
    const Board b = r.get();
    report.text += b.text;
    ready = ready && b.ready;
  }
  if (!ready) {
    report.text += o.hostfile + " not written: mend the boards above and run init again\n";
    report.status = 1;
    return report;
  }
  AtomicFile out(o.hostfile);
  std::fprintf(out.stream(), "# written by r1pi-cluster init: rank 0 first, one rank per board\n");
  for (const std::string& host : o.hosts) std::fprintf(out.stream(), "%s slots=1\n", host.c_str());
  out.commit();
  report.text += "wrote " + o.hostfile + " (" + std::to_string(o.hosts.size()) + " boards); next: r1pi-cluster check --hostfile " +
                 o.hostfile + " -m MODEL\n";
  return report;
}

}  // namespace r1pi
