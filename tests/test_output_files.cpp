// Files the tools write (common/atomic_file.h): an output that is an input is refused before
// anything is written, and a write that fails, is abandoned or is stopped by a signal leaves the
// old file whole and no temporary behind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/atomic_file.h"
#include "gguf/gguf_writer.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

namespace fs = std::filesystem;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The names in a folder (a temporary left behind shows here).
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string tool() { return test::bin_dir() + "/r1pi-model"; }

// A float model that quantize accepts (every matrix F32), in a folder of its own.
std::string float_model(const std::string& dir) {
  const std::string path = dir + "/in.gguf";
  MakeOptions o;
  o.preset = "tiny";
  o.matrix_type = o.output_type = GgmlType::F32;
  o.progress = false;
  make_model(o, path);
  return path;
}

TEST(AtomicFile, TheTargetAppearsOnlyAtCommit) {
  const std::string dir = test::scratch_dir("atomic-commit");
  const std::string path = dir + "/out.txt";
  write_text(path, "old");
  {
    AtomicFile out(path);
    std::fputs("new", out.stream());
    std::fflush(out.stream());
    EXPECT_EQ(test::read_file(path), "old");
    out.commit();
  }
  EXPECT_EQ(test::read_file(path), "new");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, AnAbandonedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string dir = test::scratch_dir("atomic-abandoned");
  const std::string path = dir + "/out.txt";
  write_text(path, "old");
  {
    AtomicFile out(path);
    std::fputs("half", out.stream());
  }  // destroyed without commit(), as when an exception unwinds
  EXPECT_EQ(test::read_file(path), "old");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, ASymlinkStaysALinkToTheNewFile) {
  const std::string dir = test::scratch_dir("atomic-symlink");
  write_text(dir + "/real.txt", "old");
  fs::create_symlink("real.txt", dir + "/link.txt");
  AtomicFile out(dir + "/link.txt");
  std::fputs("new", out.stream());
  out.commit();
  EXPECT_TRUE(fs::is_symlink(dir + "/link.txt"));
  EXPECT_EQ(test::read_file(dir + "/real.txt"), "new");
}

TEST(AtomicFile, AReplacedFileKeepsItsPermissions) {
  const std::string dir = test::scratch_dir("atomic-mode");
  const std::string path = dir + "/out.txt";
  write_text(path, "old");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  AtomicFile out(path);
  out.commit();
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(AtomicFile, ADeviceIsWrittenInPlace) {
  AtomicFile out("/dev/null");
  std::fputs("anything", out.stream());
  out.commit();
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  AtomicFile full("/dev/full");
  std::fputs("anything", full.stream());
  EXPECT_EQ(test::error_of([&] { full.commit(); }), "/dev/full: cannot write: No space left on device");
}

TEST(AtomicFile, AFolderOrAMissingFolderIsAnError) {
  const std::string dir = test::scratch_dir("atomic-folder");
  EXPECT_EQ(test::error_of([&] { AtomicFile out(dir); }), dir + ": cannot write: Is a directory");
  EXPECT_EQ(test::error_of([&] { AtomicFile out(dir + "/no/x"); }), dir + "/no/x: cannot write: No such file or directory");
}

TEST(AtomicFile, SigtermRemovesTheTemporary) {
  const std::string dir = test::scratch_dir("atomic-signal");
  write_text(dir + "/out.txt", "old");
  EXPECT_EXIT(
      {
        AtomicFile out(dir + "/out.txt");
        std::fputs("half", out.stream());
        std::fflush(out.stream());
        std::raise(SIGTERM);
      },
      testing::KilledBySignal(SIGTERM), "");
  EXPECT_EQ(test::read_file(dir + "/out.txt"), "old");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, AnOutputThatIsAnInputIsRefused) {
  const std::string dir = test::scratch_dir("atomic-same");
  const std::string in = dir + "/in.txt";
  write_text(in, "input");
  fs::create_symlink("in.txt", dir + "/soft.txt");
  fs::create_hard_link(in, dir + "/hard.txt");
  EXPECT_EQ(test::error_of([&] { AtomicFile out(in, {in}); }),
            in + ": the output is the input file " + in + ": writing it would destroy the input; give another name");
  EXPECT_NE(test::error_of([&] { AtomicFile out(dir + "/soft.txt", {in}); }).find("(a link to it)"), std::string::npos);
  EXPECT_NE(test::error_of([&] { AtomicFile out(dir + "/hard.txt", {in}); }).find("(a link to it)"), std::string::npos);
  EXPECT_EQ(test::read_file(in), "input");
  // Another file, a file not there yet and an empty input name are no match.
  write_text(dir + "/other.txt", "x");
  EXPECT_EQ(test::error_of([&] { refuse_output_over_input(dir + "/other.txt", {in, "", dir + "/absent"}); }),
            "(no error)");
  EXPECT_EQ(test::error_of([&] { refuse_output_over_input(dir + "/new.txt", {in}); }), "(no error)");
}

// r1pi-model quantize IN IN used to empty IN (opened for writing before it was read).
TEST(ModelToolOutputs, QuantizeOverItsInputIsRefusedAndTheInputKept) {
  const std::string dir = test::scratch_dir("quantize-over-input");
  const std::string in = float_model(dir);
  fs::create_symlink("in.gguf", dir + "/soft.gguf");
  fs::create_hard_link(in, dir + "/hard.gguf");
  const std::string before = test::read_file(in);
  for (const std::string& out : {in, dir + "/soft.gguf", dir + "/hard.gguf"}) {
    const auto r = test::run_command(tool() + " quantize --no-progress " + in + " " + out + " q4_0");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("error: " + out + ": the output is the input file " + in), std::string::npos) << r.output;
    EXPECT_TRUE(test::read_file(in) == before) << out << " changed the input";
  }
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"hard.gguf", "in.gguf", "soft.gguf"}));
  // The other way round too: IN through a link, OUT the file itself.
  const auto r = test::run_command(tool() + " quantize --no-progress " + dir + "/soft.gguf " + in + " q4_0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(test::read_file(in) == before);
}

TEST(ModelToolOutputs, EveryWriterRefusesItsInput) {
  const std::string dir = test::scratch_dir("writers-over-input");
  const std::string in = float_model(dir);
  const std::string before = test::read_file(in);
  const std::string tokenizer = test::shared_data("llama3-tokenizer.json");
  const std::string tokenizer_copy = dir + "/tokenizer.json";
  fs::copy_file(tokenizer, tokenizer_copy);
  const std::string tokenizer_before = test::read_file(tokenizer_copy);
  for (const std::string& args : {" inflate --no-progress " + in + " --preset tiny -o " + in,
                                  " import-llama2c " + in + " -o " + in,
                                  " make --no-progress --tokenizer " + tokenizer_copy + " -o " + tokenizer_copy}) {
    const auto r = test::run_command(tool() + args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("the output is the input file"), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_TRUE(test::read_file(in) == before);
  EXPECT_TRUE(test::read_file(tokenizer_copy) == tokenizer_before);
}

// A full disk half way (ulimit -f) used to leave the target truncated: the old model is kept.
TEST(ModelToolOutputs, AFailedWriteKeepsTheOldFile) {
  const std::string dir = test::scratch_dir("failed-write-keeps-old");
  const std::string out = dir + "/model.gguf";
  write_text(out, "the old model");
  const auto r = test::run_command("sh -c \"trap '' XFSZ; ulimit -f 1000; exec " + tool() +
                                   " make --preset tiny --no-progress -o " + out + "\"");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: " + out + ": write failed: File too large"), std::string::npos) << r.output;
  EXPECT_EQ(test::read_file(out), "the old model");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"model.gguf"});
}

TEST(ModelToolOutputs, AnIncompleteGgufKeepsTheOldFile) {
  const std::string dir = test::scratch_dir("incomplete-gguf-keeps-old");
  const std::string path = dir + "/x.gguf";
  write_text(path, "old");
  {
    GgufWriter w;
    w.add_tensor("a", {4}, GgmlType::F32);
    w.open(path);
    EXPECT_NE(test::error_of([&] { w.close(); }).find("got 0 of its 16 bytes"), std::string::npos);
  }
  EXPECT_EQ(test::read_file(path), "old");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"x.gguf"});
}

TEST(ProgramOutputs, SavedLogitsAndTimingsRefuseTheModel) {
  const std::string dir = test::scratch_dir("outputs-over-model");
  const std::string model = float_model(dir);
  const std::string before = test::read_file(model);
  const std::string text = dir + "/text.txt";
  write_text(text, "one two three four five six seven eight nine ten");
  const auto saved = test::run_command(test::bin_dir() + "/r1pi-perplexity -m " + model + " -f " + text +
                                       " -c 8 -t 1 --save-logits " + model);
  EXPECT_EQ(saved.exit_code, 1) << saved.output;
  EXPECT_NE(saved.output.find("error: " + model + ": the output is the input file"), std::string::npos) << saved.output;
  for (const std::string& args : {"-p hi --timings " + model, "-f " + text + " --timings " + text}) {
    const auto timed = test::run_command(test::bin_dir() + "/r1pi -m " + model + " -n 2 -t 1 " + args);
    EXPECT_EQ(timed.exit_code, 1) << timed.output;
    EXPECT_NE(timed.output.find("the output is the input file"), std::string::npos) << timed.output;
  }
  EXPECT_EQ(test::read_file(text), "one two three four five six seven eight nine ten");
  EXPECT_TRUE(test::read_file(model) == before);
}

}  // namespace
}  // namespace r1pi
