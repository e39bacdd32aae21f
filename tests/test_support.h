// Helpers shared by the tests: where the external data lives, where the built programs are,
// scratch folders, running a program to look at its exit code and output, and llama.cpp's
// tokenizer vectors.
#pragma once
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace r1pi {
struct LoadedModel;
struct MakeOptions;
class ThreadPool;
}  // namespace r1pi

namespace r1pi::test {

// A float's bit pattern and back (for tests that compare or build exact bytes).
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

// ../shared/data beside the checkout, or $R1PI_SHARED_DATA when set.
std::string shared_data(const std::string& file = "");
// The build folder (holds r1pi and r1pi-model).
std::string bin_dir();
// A fresh folder under the build tree for one test's files.
std::string scratch_dir(const std::string& name);

struct CommandResult {
  int exit_code = -1;   // the program's exit status; 128+N when killed by signal N
  std::string output;   // stdout and stderr together
};
// Runs a shell command line and collects what it prints.
CommandResult run_command(const std::string& command_line);

// The message of the r1pi::Error that f throws; "(no error)" when it returns.
std::string error_of(const std::function<void()>& f);

// Writes a random-weight model (r1pi::make_model, no progress line) to a folder of this process's
// own (ctest runs tests as parallel processes) and returns its path.
std::string make_model_file(const std::string& name, MakeOptions options);

// One rank's logits for every token, fed in chunks of `chunk` tokens (the whole sequence in one
// batch, one by one, or anything between).
std::vector<float> chunked_logits(const LoadedModel& model, const std::vector<int32_t>& tokens,
                                  int chunk, ThreadPool& pool);

// The whole file's bytes; a test failure (and "") if it cannot be read.
std::string read_file(const std::string& path);

// One of llama.cpp's tokenizer test vectors: a text and the ids it encodes to (no BOS, special
// tokens not parsed).
struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};
// llama.cpp's NAME.inp / NAME.out pair in the shared data (texts separated by
// "\n__ggml_vocab_test__\n"; one line of ids per text).
std::vector<VocabCase> llama_cpp_vocab_cases(const std::string& name);

}  // namespace r1pi::test
