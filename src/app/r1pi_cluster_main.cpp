// r1pi-cluster: checks a board for r1pi and predicts its decode speed (check --local).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cluster/board_check.h"
#include "cluster/check_report.h"
#include "cluster/model_needs.h"
#include "cluster/run_compare.h"
#include "cluster/system_facts.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/thread_pool.h"
#include "neon/kernels.h"
#include "runtime/read_bandwidth.h"
#include "tokenizer/printable_text.h"

namespace {

std::string host_name() {
  char name[256] = "";
  return gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "this machine";
}

int run(int argc, char** argv) {
  CLI::App app{"r1pi-cluster: check the boards r1pi runs on, and predict its speed there", "r1pi-cluster"};
  app.require_subcommand(1);
  std::string model, root = "/", compare;
  int ctx = 0, threads = 0;
  bool local = false, json = false, warn_ok = false;
  CLI::App* check = app.add_subcommand("check", "a row per check (ok, warn or fail, with the fix) and the decode speed");
  check->add_flag("--local", local, "check the machine this runs on, as one board");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (!local)
      throw r1pi::Error("check: give --local (this machine as one board); checking boards over ssh from a hostfile "
                        "is not in this build: run `r1pi-cluster check --local` on each board");
    if (std::filesystem::is_directory(model)) throw r1pi::Error(model + ": is a folder, not a GGUF file");
    const r1pi::ModelNeeds needs = r1pi::model_needs(model, ctx);
    r1pi::BoardMeasures measures;
    measures.kernels = r1pi::kernels().name;
    measures.threads = threads > 0 ? threads : r1pi::ThreadPool::available_cores();
    measures.read_gbps = r1pi::measure_read_bandwidth(measures.threads);
    measures.page_bytes = sysconf(_SC_PAGESIZE);
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
