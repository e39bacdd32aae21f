// The KV cache takes memory as positions fill, not at start (src/layers/kv_cache.h): -c 1000000
// used to write the whole cache before the first token (1.3 GB of RSS for 4 tokens). A cache past
// the memory available now (not the machine's total) is refused with the sizes and -c named.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "common/available_memory.h"
#include "layers/kv_cache.h"
#include "test_support.h"

namespace r1pi {
namespace {

// This process's resident set in bytes (VmRSS in /proc/self/status).
uint64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  uint64_t kb = 0;
  while (status >> key)
    if (key == "VmRSS:" && status >> kb) return kb * 1024;
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

TEST(KvCacheMemory, PositionsTakeMemoryWhenFirstStored) {
  // 512 MB of cache (4 layers x 4 heads x 2^17 positions x 64 floats, keys and values), where
  // the machine has room for it: made, then a few positions stored and read back.
  const int layers = 4, heads = 4, head_dim = 64, n_ctx = 1 << 17;
  const uint64_t bytes = KvCache::bytes_for(layers, n_ctx, heads, head_dim, GgmlType::F32);
  if (available_memory_bytes() < 2 * bytes) GTEST_SKIP() << "less than 1 GB of memory available";
  const uint64_t before = resident_bytes();
  KvCache cache(layers, n_ctx, heads, head_dim, GgmlType::F32);
  std::vector<float> k(size_t(heads * head_dim)), v(k.size());
  for (int pos = 0; pos < 4; ++pos)
    for (int layer = 0; layer < layers; ++layer) {
      for (size_t i = 0; i < k.size(); ++i) k[i] = float(pos * 1000 + layer * 100) + float(i), v[i] = -k[i];
      cache.store(layer, 0, pos, k.data(), v.data());
    }
  float got = 0;
  std::memcpy(&got, cache.key(3, 0, 2, 3) + 5 * sizeof(float), sizeof got);
  EXPECT_EQ(got, float(3 * 1000 + 3 * 100 + 2 * head_dim + 5));
  std::memcpy(&got, cache.value(1, 0, 0, 2), sizeof got);
  EXPECT_EQ(got, -float(2 * 1000 + 100));
  // Each (layer, head) run of positions is touched at its start: at most a huge page each (2 MB:
  // 64 MB here), far below the 512 MB that zeroing the cache took.
  const uint64_t grown = resident_bytes() - before;
  EXPECT_LT(grown, bytes / 4) << "resident size grew by " << grown / 1e6 << " MB for a " << bytes / 1e6
                              << " MB cache holding 4 positions";
}

// A cache a little past what is available (not past the machine's total, which the check once
// used): refused before allocating, naming the memory available and -c.
TEST(KvCacheMemory, BeyondAvailableMemoryIsRefused) {
  const uint64_t available = available_memory_bytes();
  ASSERT_GT(available, 0u);
  // 2 x 1000 layers x 64 heads x 128 floats: 65.5 MB per position.
  const uint64_t per_position = KvCache::bytes_for(1000, 1, 64, 128, GgmlType::F32);
  const int n_ctx = int(available * 5 / 4 / per_position + 1);
  const std::string e = test::error_of([&] { KvCache(1000, n_ctx, 64, 128, GgmlType::F32); });
  EXPECT_NE(e.find("the KV cache for a context of " + std::to_string(n_ctx) + " tokens would take "),
            std::string::npos) << e;
  EXPECT_TRUE(std::regex_search(e, std::regex("more than the [0-9.]+ GB of memory available on this machine: "
                                              "lower -c/--ctx-size or use a smaller --kv-type")))
      << e;
}

// r1pi with a context of 200,000 positions (an 820 MB cache on the tiny model) and 4 tokens: its
// peak resident size stays near that of a run with the default context.
TEST(KvCacheMemory, ShortRunWithLargeContextStaysSmall) {
  const std::string& model = test::tiny_model_file();
  if (available_memory_bytes() < (uint64_t(2) << 30)) GTEST_SKIP() << "less than 2 GB of memory available";
  // The children's peak RSS in kB, from the rusage python reads after the run.
  auto peak_kb = [&](const std::string& args) {
    const test::CommandResult r = test::run_command(
        "python3 -c 'import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
        "print(\"peak\", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)' " +
        test::bin_dir() + "/r1pi -m " + model + " -p hi -n 4 -t 1 --temp 0 " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex("peak ([0-9]+)"))) << r.output;
    return m.empty() ? 0.0 : std::stod(m[1]);
  };
  const double small = peak_kb(""), large = peak_kb("-c 200000");
  EXPECT_LT(large - small, 150e3) << "peak RSS " << large << " kB with -c 200000, " << small << " kB with the default";
}

}  // namespace
}  // namespace r1pi
