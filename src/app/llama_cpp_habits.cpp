#include "app/llama_cpp_habits.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace r1pi {

namespace {

// llama-cli's spellings of options r1pi has under another name.
struct Alias {
  const char* spelling;
  const char* option;
};
constexpr Alias kAliases[] = {
    {"-cnv", "--chat"},   {"--conversation", "--chat"}, {"-sys", "--system"},
    {"--system-prompt", "--system"}, {"-ctk", "--kv-type"}, {"--cache-type-k", "--kv-type"},
};

// llama.cpp flags with no meaning here: accepted, with the reason in a note.
enum class Takes { Nothing, Value, OnOffAuto };
struct Ignored {
  std::vector<const char*> names;
  Takes takes;
  const char* why;
};
const std::vector<Ignored> kIgnored = {
    {{"-ngl", "--n-gpu-layers", "--gpu-layers"}, Takes::Value,
     "llama.cpp's GPU offload; r1pi computes on CPUs (more boards: mpirun)"},
    {{"-fa", "--flash-attn"}, Takes::OnOffAuto,
     "r1pi's attention already reads each KV head once for all its query heads"},
    {{"--mlock"}, Takes::Nothing, "r1pi does not lock its weights in memory"},
    {{"--no-mmap"}, Takes::Nothing, "r1pi already copies each rank's slices into its own memory"},
};

bool is_number(const std::string& word) {
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return !word.empty() && end == word.c_str() + word.size();
}

const Ignored* ignored(const std::string& name) {
  for (const Ignored& flag : kIgnored)
    for (const char* n : flag.names)
      if (name == n) return &flag;
  return nullptr;
}

}  // namespace

HabitArgs llama_cpp_habits(const CLI::App& app, int argc, const char* const* argv) {
  HabitArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") {  // the rest is CLI11's to read as it is
      out.args.insert(out.args.end(), argv + i, argv + argc);
      break;
    }
    // --name=value: the name decides.
    const size_t eq = word.rfind("--", 0) == 0 ? word.find('=') : std::string::npos;
    std::string name = word.substr(0, eq);
    for (const Alias& a : kAliases)
      if (name == a.spelling) {
        word = a.option + word.substr(name.size());
        name = a.option;
      }
    if (const Ignored* flag = ignored(name)) {
      std::string dropped = name;
      const bool has_next = i + 1 < argc;
      if (eq != std::string::npos) {
        dropped = word;
      } else if (flag->takes == Takes::Value && has_next) {
        dropped += std::string(" ") + argv[++i];
      } else if (flag->takes == Takes::OnOffAuto && has_next &&
                 (!std::strcmp(argv[i + 1], "on") || !std::strcmp(argv[i + 1], "off") ||
                  !std::strcmp(argv[i + 1], "auto"))) {
        dropped += std::string(" ") + argv[++i];
      }
      out.notes.push_back("note: " + dropped + " ignored: " + flag->why);
      continue;
    }
    const CLI::Option* option = name.size() > 1 && name[0] == '-' ? app.get_option_no_throw(name) : nullptr;
    if (option) {
      out.args.push_back(word);
      // Its value goes through untouched, whatever it looks like ("-p -ngl").
      if (option->get_items_expected_min() > 0 && eq == std::string::npos && i + 1 < argc)
        out.args.push_back(argv[++i]);
      continue;
    }
    if (word.size() > 2 && word[0] == '-' && word[1] != '-' && !is_number(word))
      throw Error("unknown option " + word + " (r1pi reads no clustered short flags: it is not " +
                  word.substr(0, 2) + " " + word.substr(2) + "); r1pi --help lists the options");
    out.args.push_back(word);
  }
  std::reverse(out.args.begin(), out.args.end());
  return out;
}

}  // namespace r1pi
