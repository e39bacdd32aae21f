// llama.cpp's command-line habits on r1pi's parser. People type llama-cli's flags from memory:
// CLI11 would read `-ngl 99` as `-n gl` ("Could not convert: --n-predict = gl") and `-fa` as `-f a`.
// Here llama.cpp's spellings of r1pi's options are translated, its flags that mean nothing on r1pi
// are dropped with a note each, those r1pi leaves to another tool (-hf: r1pi-model pull) are
// refused saying what to run, and every other one-dash word of several letters is refused naming
// it: r1pi has no clustered short flags.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace r1pi {

struct HabitArgs {
  std::vector<std::string> args;   // for CLI::App::parse, in CLI11's reversed order
  std::vector<std::string> notes;  // one per flag dropped ("note: -ngl 99 ignored: ...")
};

// argv[1..argc) read against app's options (so that an option's value, "-p -ngl" say, is left
// alone). Throws r1pi::Error for a refused flag or a clustered or unknown one-dash word.
HabitArgs llama_cpp_habits(const CLI::App& app, int argc, const char* const* argv);

}  // namespace r1pi
