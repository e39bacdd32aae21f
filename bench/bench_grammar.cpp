// Google Benchmark of constrained decoding's per-step cost (src/grammar): the token mask over the
// real vocabularies (Llama 3: 128,256 tokens; Qwen3: 151,936) in the states a JSON-schema
// generation spends its time in, the trie's one-off build, and advancing by one token.
//
//   trie_build/<vocab>            TokenTrie from the tokenizer (once per vocabulary)
//   mask/<vocab>/<state>          allowed_tokens in that state
//   accept_token/<vocab>          GrammarState::accept of one token's bytes (a sampled token)
//
// The tokenizer files come from the shared data folder: $R1PI_SHARED_DATA, else the build's
// R1PI_SHARED_DATA (../shared/data beside the checkout).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/json_schema_grammar.h"
#include "grammar/token_mask.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace r1pi;

std::string shared_data(const std::string& file) {
  const char* dir = std::getenv("R1PI_SHARED_DATA");
  return std::string(dir ? dir : R1PI_DEFAULT_SHARED_DATA) + "/" + file;
}

struct Vocabulary {
  const char* name;
  const char* file;
};
constexpr Vocabulary kVocabularies[] = {
    {"llama3", "llama3-tokenizer.json"},
    {"qwen3", "qwen/tokenizers/qwen3/tokenizer.json"},
};

const Tokenizer& tokenizer(const std::string& file) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto& t = loaded[file];
  if (!t) t = std::make_unique<Tokenizer>(load_hf_tokenizer_json(shared_data(file), SpecialTokenNames::Llama3));
  return *t;
}
const TokenTrie& trie(const std::string& file) {
  static std::map<std::string, std::unique_ptr<TokenTrie>> built;
  auto& t = built[file];
  if (!t) t = std::make_unique<TokenTrie>(tokenizer(file));
  return *t;
}

// A typical structured-output schema: an object with strings, numbers, an enum, a nested array.
const char* const kSchema = R"({"type":"object","properties":{
    "name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
    "score":{"type":"number"},"role":{"enum":["admin","user","guest"]},
    "tags":{"type":"array","items":{"type":"string"}},
    "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},
               "required":["city"]}},
    "required":["name","age","role"]})";

// Each state: the text already written.
struct State {
  const char* name;
  const char* text;
};
constexpr State kStates[] = {
    {"start", ""},                                                    // "{" only
    {"key", "{\"name\": \"Ada\", "},                                  // the next key (a known name)
    {"string", "{\"name\": \"Ada Lovel"},                             // inside a free string: most tokens allowed
    {"integer", "{\"name\": \"Ada\", \"age\": 3"},                    // inside a bounded integer
    {"enum", "{\"name\": \"Ada\", \"age\": 36, \"role\": \"ad"},      // inside an enum value
    {"nested_string", "{\"name\": \"A\", \"age\": 1, \"role\": \"user\", \"tags\": [\"x\", \"long tag te"},
    {"after_value", "{\"name\": \"Ada\", \"age\": 36"},               // "," or "}" (or whitespace)
};

GrammarState state_after(const char* text) {
  static const auto grammar = json_schema_grammar(nlohmann::ordered_json::parse(kSchema));
  GrammarState state(grammar);
  if (!state.accept(text)) throw std::runtime_error(std::string("bench_grammar: the schema refuses ") + text);
  return state;
}

void register_benchmarks() {
  for (const Vocabulary& v : kVocabularies) {
    const std::string file = v.file;
    benchmark::RegisterBenchmark((std::string("trie_build/") + v.name).c_str(), [file](benchmark::State& s) {
      const Tokenizer& t = tokenizer(file);
      for (auto _ : s) benchmark::DoNotOptimize(TokenTrie(t));
    })->Unit(benchmark::kMillisecond);
    for (const State& st : kStates) {
      const std::string text = st.text;
      benchmark::RegisterBenchmark((std::string("mask/") + v.name + "/" + st.name).c_str(), [file, text](benchmark::State& s) {
        const TokenTrie& t = trie(file);
        const GrammarState state = state_after(text.c_str());
        size_t allowed = 0;
        for (auto _ : s) {
          const std::vector<uint64_t> mask = allowed_tokens(state, t);
          allowed = 0;
          for (uint64_t w : mask) allowed += size_t(__builtin_popcountll(w));
          benchmark::DoNotOptimize(allowed);
        }
        s.counters["allowed"] = double(allowed);
      })->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark((std::string("accept_token/") + v.name).c_str(), [file](benchmark::State& s) {
      const TokenTrie& t = trie(file);
      const GrammarState state = state_after("{\"name\": \"Ada");
      const int32_t id = *tokenizer(file).find_token("\xC4\xA0Lov");  // " Lov"
      for (auto _ : s) {
        GrammarState copy = state;
        benchmark::DoNotOptimize(accept_token(copy, t, id));
      }
    })->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
