// What r1pi-bench runs: llama-bench's parameter lists ("1,2,4", ranges "1-4", "1-16+4", "1-16*2")
// and every combination of them. A parameter list is one row of kListParams; the tests (pp, tg,
// pp+tg) are crossed with every combination.
#pragma once
#include <limits>
#include <string>
#include <vector>

namespace r1pi {

// The settings a combination fixes (one value of every list).
struct BenchConfig {
  int threads = 0;   // compute threads per rank
  int batch = 64;    // prompt tokens per prefill forward
  int depth = 0;     // tokens in the context before the measured ones
  int spec = 0;      // speculative decoding: 0 off, 1 on
  int kv = 0;        // the KV cache's type: an index of kBenchKvTypes (0: f32, the exact one)
};

// One list option of r1pi-bench, in nesting order: the first row varies slowest (threads: every
// rank rebuilds its engine for a new thread count).
struct ListParam {
  const char* flag;          // CLI11 names, e.g. "-t,--threads"
  const char* help;
  int BenchConfig::*field;
  const char* default_list;  // "" = the cores available
  int min_value, max_value;
  const std::vector<std::string>* names = nullptr;  // values given by these names (their index kept)
};
extern const std::vector<ListParam> kListParams;

// The KV cache types -ctk takes, by r1pi's --kv-type names.
extern const std::vector<std::string> kBenchKvTypes;

// One measured test: n_prompt prompt tokens then n_gen generated ones, after `depth` tokens of
// context (pp: n_gen 0; tg: n_prompt 0).
struct BenchTest {
  int n_prompt = 0;
  int n_gen = 0;
  BenchConfig config;
  std::string name() const;  // llama-bench's: pp512, tg128, pp512+tg128, with " @ d2048"
};

// "1,2,4", "1-4" (step 1), "1-16+4" (step 4), "1-16*2" (times 2), or a mix: "1,8-16+8". Throws
// r1pi::Error naming the flag when a value is not an integer in [min_value, max_value] or a range
// is empty.
std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int min_value,
                                int max_value = std::numeric_limits<int>::max());
// "f32,f16": each name's index in `names`; throws r1pi::Error naming the flag and the choices.
std::vector<int> parse_name_list(const std::string& flag, const std::string& text,
                                 const std::vector<std::string>& names);
// -pg's "PP,TG" pairs, several separated by ';' or given as repeated options.
std::vector<std::pair<int, int>> parse_pg_pairs(const std::string& text);

// Every combination of the lists (lists[i] holds kListParams[i]'s values), each crossed with the
// pp tests, then the tg tests, then the pg tests.
std::vector<BenchTest> expand_tests(const std::vector<std::vector<int>>& lists,
                                    const std::vector<int>& n_prompt, const std::vector<int>& n_gen,
                                    const std::vector<std::pair<int, int>>& pg);

}  // namespace r1pi
