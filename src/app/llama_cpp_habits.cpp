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
    {"-s", "--seed"},     {"-np", "--parallel"},
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
    {{"--jinja"}, Takes::Nothing,
     "r1pi renders the model's own Jinja chat template by default (--chat-template-file F renders another)"},
};

// llama.cpp flags r1pi refuses, each with what to do instead (given the flag's value).
struct Refused {
  std::vector<const char*> names;
  Takes takes;
  std::string (*instead)(const std::string& value);
};
const std::vector<Refused> kRefused = {
    // Downloading is r1pi-model's: on a cluster every rank would fetch gigabytes, and a run should
    // not reach the network unasked.
    {{"-hf", "-hfr", "--hf-repo"}, Takes::Value,
     [](const std::string& repo) {
       return "r1pi does not download models: `r1pi-model pull " + (repo.empty() ? "OWNER/NAME[:QUANT]" : repo) +
              "` fetches the GGUF and prints its path, then run r1pi -m PATH";
     }},
    {{"--no-jinja"}, Takes::Nothing,
     [](const std::string&) {
       return std::string("r1pi renders the model's own Jinja chat template; "
                          "--chat-template NAME picks a built-in one instead (r1pi --help names them)");
     }},
};

bool is_number(const std::string& word) {
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return !word.empty() && end == word.c_str() + word.size();
}

template <class Flag>
const Flag* named(const std::vector<Flag>& flags, const std::string& name) {
  for (const Flag& flag : flags)
    for (const char* n : flag.names)
      if (name == n) return &flag;
  return nullptr;
}

// The value of the flag at argv[i] ("" when it has none), taking the next word when it is one.
std::string take_value(Takes takes, const std::string& word, size_t eq, int argc, const char* const* argv, int& i) {
  if (eq != std::string::npos) return word.substr(eq + 1);
  const bool has_next = i + 1 < argc;
  if (takes == Takes::Value && has_next) return argv[++i];
  if (takes == Takes::OnOffAuto && has_next &&
      (!std::strcmp(argv[i + 1], "on") || !std::strcmp(argv[i + 1], "off") || !std::strcmp(argv[i + 1], "auto")))
    return argv[++i];
  return "";
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
    if (const Ignored* flag = named(kIgnored, name)) {
      const std::string value = take_value(flag->takes, word, eq, argc, argv, i);
      const std::string dropped = eq != std::string::npos ? word : value.empty() ? name : name + " " + value;
      out.notes.push_back("note: " + dropped + " ignored: " + flag->why);
      continue;
    }
    if (const Refused* flag = named(kRefused, name)) {
      const std::string value = take_value(flag->takes, word, eq, argc, argv, i);
      throw Error((value.empty() ? name : name + " " + value) + ": " + flag->instead(value));
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
