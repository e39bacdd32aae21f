#include "benchmark/bench_params.h"

#include <charconv>

#include "common/error.h"
#include "layers/kv_cache.h"

namespace r1pi {

constexpr int kNoMax = std::numeric_limits<int>::max();

const std::vector<std::string> kBenchKvTypes = kv_cache_type_names();

const std::vector<ListParam> kListParams = {
    {"-t,--threads", "compute threads per rank", &BenchConfig::threads, "", 1, kNoMax},
    // Second: a new cache type, like a new thread count, means a new engine on every rank.
    {"--cache-type-k,--kv-type", "KV cache type (K and V: r1pi has one for both; llama-bench's -ctk)",
     &BenchConfig::kv, kKvCacheTypes[0].name, 0, int(std::size(kKvCacheTypes)) - 1, &kBenchKvTypes},
    {"-b,--batch-size", "prompt tokens per prefill forward", &BenchConfig::batch, "64", 1, kNoMax},
    {"-d,--n-depth", "tokens of context before each test", &BenchConfig::depth, "0", 0, kNoMax},
    {"--spec", "speculative decoding: 0 off, 1 on (rank 0 drafts by prompt lookup)", &BenchConfig::spec, "0", 0, 1},
};

std::string BenchTest::name() const {
  std::string s;
  if (n_prompt > 0) s = "pp" + std::to_string(n_prompt);
  if (n_gen > 0) s += (s.empty() ? "tg" : "+tg") + std::to_string(n_gen);
  if (config.depth > 0) s += " @ d" + std::to_string(config.depth);
  return s;
}

namespace {

int parse_int(const std::string& flag, const std::string& text, int min_value, int max_value) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min_value || value > max_value)
    throw Error(flag + " " + text + ": give integers >= " + std::to_string(min_value) +
                (max_value < kNoMax ? " and <= " + std::to_string(max_value) : std::string()) +
                " (lists: 1,2,4; ranges: 1-4, 1-16+4, 1-16*2)");
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

}  // namespace

std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int min_value,
                                int max_value) {
  std::vector<int> values;
  for (const std::string& item : split(text, ',')) {
    // A range is first-last, optionally +step or *factor; a leading '-' would be a negative number,
    // which no list takes, so the range dash is searched from the second character.
    const size_t dash = item.find('-', 1);
    if (dash == std::string::npos) {
      values.push_back(parse_int(flag, item, min_value, max_value));
      continue;
    }
    const size_t op = item.find_first_of("+*", dash);
    const int first = parse_int(flag, item.substr(0, dash), min_value, max_value);
    const int last = parse_int(flag, item.substr(dash + 1, op == std::string::npos ? op : op - dash - 1),
                               min_value, max_value);
    const int step = op == std::string::npos ? 1 : parse_int(flag, item.substr(op + 1), 1, kNoMax);
    const bool times = op != std::string::npos && item[op] == '*';
    if (last < first || (times && (step < 2 || first < 1)))
      throw Error(flag + " " + item + ": an empty or endless range");
    for (long v = first; v <= last; v = times ? v * step : v + step) values.push_back(int(v));
  }
  return values;
}

std::vector<int> parse_name_list(const std::string& flag, const std::string& text,
                                 const std::vector<std::string>& names) {
  std::vector<int> values;
  for (const std::string& item : split(text, ',')) {
    size_t i = 0;
    while (i < names.size() && names[i] != item) ++i;
    if (i == names.size()) {
      std::string choices;
      for (const std::string& n : names) choices += (choices.empty() ? "" : ", ") + n;
      throw Error(flag + " " + item + ": give one or more of " + choices + " (comma-separated)");
    }
    values.push_back(int(i));
  }
  return values;
}

std::vector<std::pair<int, int>> parse_pg_pairs(const std::string& text) {
  std::vector<std::pair<int, int>> pairs;
  for (const std::string& item : split(text, ';')) {
    const std::vector<std::string> pp_tg = split(item, ',');
    if (pp_tg.size() != 2) throw Error("-pg " + item + ": give PP,TG (e.g. -pg 512,128)");
    pairs.emplace_back(parse_int("-pg", pp_tg[0], 1, kNoMax), parse_int("-pg", pp_tg[1], 1, kNoMax));
  }
  return pairs;
}

std::vector<BenchTest> expand_tests(const std::vector<std::vector<int>>& lists,
                                    const std::vector<int>& n_prompt, const std::vector<int>& n_gen,
                                    const std::vector<std::pair<int, int>>& pg) {
  std::vector<BenchConfig> configs{BenchConfig{}};
  for (size_t i = 0; i < kListParams.size(); ++i) {
    std::vector<BenchConfig> next;
    for (const BenchConfig& c : configs)
      for (int v : lists[i]) {
        next.push_back(c);
        next.back().*kListParams[i].field = v;
      }
    configs = std::move(next);
  }
  std::vector<BenchTest> tests;
  for (const BenchConfig& c : configs) {
    // As in llama-bench, -p 0 / -n 0 ask for no pp / tg tests.
    for (int p : n_prompt)
      if (p > 0) tests.push_back({p, 0, c});
    for (int n : n_gen)
      if (n > 0) tests.push_back({0, n, c});
    for (const auto& [p, n] : pg) tests.push_back({p, n, c});
  }
  return tests;
}

}  // namespace r1pi
