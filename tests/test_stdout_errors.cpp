// Output that never arrived is an error (common/standard_output.h): every program, its --help and
// --version, with stdout on /dev/full or a pipe whose reader has gone, exits non-zero, never 0.
// And every program's --help names it in its usage line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const std::string kFull = "error: writing to standard output: No space left on device";

std::string bin(const std::string& program) { return test::bin_dir() + "/" + program; }

const std::string& model() {
  static const std::string path = test::make_model_file("stdout-errors", {.preset = "tiny", .seed = 3});
  return path;
}

const std::string& text_file() {
  static const std::string path = [] {
    const std::string p = test::scratch_dir("stdout-errors-text") + "/text.txt";
    std::ofstream(p) << "one two three four five six seven eight nine ten eleven twelve";
    return p;
  }();
  return path;
}

// COMMAND >/dev/full must exit 1 and say why (on stderr, which run_command collects: the braces
// keep its 2>&1 from following stdout to /dev/full).
void expect_full_disk_error(const std::string& command) {
  const test::CommandResult r = test::run_command("{ " + command + " >/dev/full; }");
  EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.output;
  EXPECT_NE(r.output.find(kFull), std::string::npos) << command << "\n" << r.output;
}

TEST(StdoutErrors, R1piRunChatHelpAndVersion) {
  expect_full_disk_error(bin("r1pi") + " -m " + model() + " -p hi -n 4 -t 1 --temp 0");
  expect_full_disk_error("printf 'hi\\n' | " + bin("r1pi") + " -m " + model() + " --chat -n 4 -t 1 --temp 0");
  expect_full_disk_error(bin("r1pi") + " --help");
  expect_full_disk_error(bin("r1pi") + " --version");
}

TEST(StdoutErrors, R1piModel) {
  expect_full_disk_error(bin("r1pi-model") + " info " + model());
  expect_full_disk_error(bin("r1pi-model") + " tokenize -m " + model() + " -p hello");
  expect_full_disk_error(bin("r1pi-model") + " --help");
}

TEST(StdoutErrors, R1piBenchInEveryFormat) {
  for (const char* format : {"md", "json", "csv", "jsonl"})
    expect_full_disk_error(bin("r1pi-bench") + " -m " + model() + " -p 0 -n 2 -r 1 -t 1 -o " + format);
  expect_full_disk_error(bin("r1pi-bench") + " --help");
}

TEST(StdoutErrors, R1piPerplexity) {
  expect_full_disk_error(bin("r1pi-perplexity") + " -m " + model() + " -f " + text_file() + " -c 4 -t 1");
  expect_full_disk_error(bin("r1pi-perplexity") + " --help");
}

// A reader that has gone: with SIGPIPE ignored (as a shell or a service manager may leave it) the
// write fails with EPIPE, which must be an error; with the default action the signal ends the
// program, quietly and not with 0.
TEST(StdoutErrors, AClosedPipeIsNeverSuccess) {
  const std::string script = test::scratch_dir("stdout-closed-pipe") + "/closed_pipe.py";
  std::ofstream(script) << R"(import os, subprocess, sys
r, w = os.pipe()
os.close(r)
restore = sys.argv[1] == "default"
p = subprocess.run(sys.argv[2:], stdout=w, stderr=subprocess.PIPE, restore_signals=restore)
sys.stdout.write("status %d\n%s" % (p.returncode, p.stderr.decode()))
)";
  for (const std::string& command : {bin("r1pi") + " --help", bin("r1pi-model") + " info " + model()}) {
    const test::CommandResult ignored = test::run_command("python3 " + script + " ignored " + command);
    EXPECT_NE(ignored.output.find("status 1\n"), std::string::npos) << command << "\n" << ignored.output;
    EXPECT_NE(ignored.output.find("error: writing to standard output: Broken pipe"), std::string::npos)
        << command << "\n" << ignored.output;
    const test::CommandResult by_default = test::run_command("python3 " + script + " default " + command);
    EXPECT_EQ(by_default.output.find("status 0\n"), std::string::npos) << command << "\n" << by_default.output;
  }
}

// The usage line used to read "Usage: [OPTIONS]".
TEST(Help, NamesTheProgram) {
  for (const std::string program : {"r1pi", "r1pi-model", "r1pi-bench", "r1pi-perplexity"}) {
    const test::CommandResult r = test::run_command(bin(program) + " --help");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Usage: " + program + " [OPTIONS]"), std::string::npos) << r.output;
  }
  const test::CommandResult sub = test::run_command(bin("r1pi-model") + " quantize --help");
  EXPECT_NE(sub.output.find("Usage: r1pi-model quantize [OPTIONS]"), std::string::npos) << sub.output;
  // r1pi runs more than Llama: the help lists the architectures.
  const test::CommandResult r1pi = test::run_command(bin("r1pi") + " --help");
  EXPECT_EQ(r1pi.output.find("Llama-family"), std::string::npos) << r1pi.output;
  EXPECT_NE(r1pi.output.find("qwen3"), std::string::npos) << r1pi.output;
}

}  // namespace
}  // namespace r1pi
