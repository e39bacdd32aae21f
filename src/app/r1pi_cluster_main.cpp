// r1pi-cluster: sets up the boards of a cluster (init), checks them (over ssh, each running its own
// check --local) or this machine, and predicts r1pi's decode speed there.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cluster/board_check.h"
#include "cluster/check_report.h"
#include "cluster/cluster_check.h"
#include "cluster/cluster_init.h"
#include "cluster/file_sha256.h"
#include "cluster/hostfile.h"
#include "cluster/model_needs.h"
#include "cluster/remote_run.h"
#include "cluster/run_compare.h"
#include "cluster/system_facts.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/thread_pool.h"
#include "neon/kernels.h"
#include "runtime/read_bandwidth.h"
#include "tokenizer/printable_text.h"

namespace {

// Where this program is: r1pi is beside it, and every board has both at the same path.
std::string own_folder() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string host_name() {
  char name[256] = "";
  return gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "this machine";
}

int run(int argc, char** argv) {
  CLI::App app{"r1pi-cluster: check the boards r1pi runs on, and predict its speed there", "r1pi-cluster"};
  app.require_subcommand(1);
  std::string model, root = "/", compare, hostfile;
  std::string ssh = "ssh -o BatchMode=yes -o ConnectTimeout=5 -o LogLevel=ERROR";
  int ctx = 0, threads = 0;
  bool local = false, json = false, warn_ok = false;
  CLI::App* check = app.add_subcommand("check", "a row per check (ok, warn or fail, with the fix) and the decode speed");
  check->add_flag("--local", local, "check the machine this runs on, as one board");
  check->add_option("--hostfile", hostfile,
                    "check every board of this Open MPI hostfile: each runs its own check over ssh, side by side")
      ->check(CLI::ExistingFile);
  check->add_option("--ssh", ssh, "the ssh command that reaches a board (its host name follows)")->capture_default_str();
  check->add_option("-m,--model", model, "the GGUF file r1pi will run")->required();
  check->add_option("-c,--ctx-size", ctx, "the context r1pi will run with (its KV cache; default: r1pi's)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("-t,--threads", threads, "r1pi's threads there (default: every core)")->check(CLI::NonNegativeNumber);
  check->add_option("--compare", compare,
                    "r1pi --timings RUN.csv from a run of the model here: its decode beside the bound, and what holds it")
      ->check(CLI::ExistingFile);
  check->add_flag("--json", json, "the report as JSON");
  check->add_flag("--warn-ok", warn_ok, "exit 0 with warnings (failures still exit 1)");
  check->add_option("--root", root, "read proc/ and sys/ under this folder instead of / (a test's fake board)")
      ->check(CLI::ExistingDirectory);
  std::vector<std::string> init_hosts;
  std::string init_hostfile = "pis";
  CLI::App* init = app.add_subcommand(
      "init", "make boards a cluster: ssh, the same Open MPI, r1pi copied to this folder's path, the hostfile");
  init->add_option("BOARDS", init_hosts, "the boards' host names, rank 0's first")->required();
  init->add_option("-o,--output", init_hostfile, "the hostfile to write")->capture_default_str();
  init->add_option("--ssh", ssh, "the ssh command that reaches a board (its host name follows)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*init) {
      for (size_t i = 0; i < init_hosts.size(); ++i)
        if (std::find(init_hosts.begin(), init_hosts.begin() + std::ptrdiff_t(i), init_hosts[i]) != init_hosts.begin() + std::ptrdiff_t(i))
          throw r1pi::Error("init: " + init_hosts[i] + " is given twice: one rank per board");
      const r1pi::InitReport report = r1pi::init_cluster({init_hosts, ssh, init_hostfile, own_folder()});
      std::fputs(report.text.c_str(), stdout);
      return report.status;
    }
    if (local == !hostfile.empty())
      throw r1pi::Error("check: give --local (this machine as one board) or --hostfile FILE (every board, over ssh)");
    if (!hostfile.empty()) {
      if (!compare.empty()) throw r1pi::Error("check: --compare goes with --local (a run of this board)");
      r1pi::ClusterCheckOptions o{r1pi::read_hostfile(hostfile), ssh, "", model, own_folder()};
      o.remote_command = r1pi::shell_quote(o.bin_dir + "/r1pi-cluster") + " check --local --json --warn-ok -m " +
                         r1pi::shell_quote(model) + (ctx ? " -c " + std::to_string(ctx) : "") +
                         (threads ? " -t " + std::to_string(threads) : "");
      const r1pi::ClusterReport report = r1pi::check_cluster(o, warn_ok);
      std::fputs(json ? (report.json.dump(2) + "\n").c_str() : report.table.c_str(), stdout);
      return report.status;
    }
    if (std::filesystem::is_directory(model)) throw r1pi::Error(model + ": is a folder, not a GGUF file");
    const r1pi::ModelNeeds needs = r1pi::model_needs(model, ctx);
    r1pi::BoardMeasures measures;
    measures.kernels = r1pi::kernels().name;
    measures.threads = threads > 0 ? threads : r1pi::ThreadPool::available_cores();
    measures.read_gbps = r1pi::measure_read_bandwidth(measures.threads);
    measures.page_bytes = sysconf(_SC_PAGESIZE);
    measures.r1pi_sha256 = r1pi::file_sha256(own_folder() + "/r1pi");
    r1pi::BoardReport report = r1pi::check_board(host_name(), r1pi::read_system_facts(root), measures, needs);
    if (!compare.empty()) report.rows.push_back(r1pi::compare_with_run(compare, report));
    if (json)
      std::printf("%s\n", r1pi::report_json(report).dump(2).c_str());
    else
      std::fputs(r1pi::report_table(report).c_str(), stdout);
    return r1pi::report_status(report, warn_ok);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", r1pi::printable_text(e.what(), true).c_str());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { return r1pi::exit_status_after_stdout(run(argc, argv)); }
