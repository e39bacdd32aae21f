// Decode attention alone, on a synthetic cache: the rate at which it reads its keys and values.
// For each context length L, one token attends to positions 0 .. L - 1 of one layer after another
// (enough layers that their caches do not fit the last-level cache, so every call reads memory);
// the fastest of --reps passes over the layers is kept (the machine may be shared). On a machine
// busier than its cores the process's CPU time is the steadier measure of the work (with one
// thread: with more, waiting workers spin and count too). One line each:
//   attention shape=<q>/<kv>x<hd> threads=T L=<l> us_per_layer=... GBps=<KV bytes read / time>
//     cpu_us_per_layer=... cpu_GBps=...
// Usage: attention_bench [--shape 8B|1B] [--threads 2] [--lengths 512,1500,4000] [--layers 8]
//                        [--reps 5] [--batch 1] [--kv-type f32|f16|q8_0]
//   --batch B times B tokens at positions L - B .. L - 1 (a prefill or verification batch).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_args.h"
#include "common/thread_pool.h"
#include "layers/attention.h"
#include "layers/kv_cache.h"

namespace {

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace r1pi;
  std::string shape_name = "8B", kv_type = "f32";
  int threads = 2, layers = 8, reps = 5, batch = 1;
  std::vector<int> lengths = {512, 1500, 4000};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--shape") shape_name = v;
    else if (a == "--threads") threads = std::max(1, std::atoi(v.c_str()));
    else if (a == "--lengths") lengths = bench::parse_list(v);
    else if (a == "--layers") layers = std::max(1, std::atoi(v.c_str()));
    else if (a == "--reps") reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--batch") batch = std::max(1, std::atoi(v.c_str()));
    else if (a == "--kv-type") kv_type = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  // Llama 3 8B and 1B: 32 query heads over 8 KV heads, head_dim 128 and 64.
  const AttentionShape shape = {32, 8, shape_name == "1B" ? 64 : 128};
  const int kv_dim = shape.n_kv_heads * shape.head_dim, q_dim = shape.n_q_heads * shape.head_dim;
  const int n_ctx = *std::max_element(lengths.begin(), lengths.end());
  ThreadPool pool(threads);
  KvCache cache(layers, n_ctx, shape.n_kv_heads, shape.head_dim, kv_cache_type(kv_type));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(kv_dim), v(kv_dim), q(size_t(batch) * q_dim), out(q.size());
  for (int l = 0; l < layers; ++l)
    for (int t = 0; t < n_ctx; ++t) {
      for (int i = 0; i < kv_dim; ++i) k[i] = normal(rng), v[i] = normal(rng);
      cache.store(l, 0, t, k.data(), v.data());
    }
  for (float& x : q) x = normal(rng);
  for (int L : lengths) {
    const int pos0 = std::max(0, L - batch), B = L - pos0;
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_seconds();
      for (int l = 0; l < layers; ++l)
        attention(q.data(), cache, l, {{0, B, 0, pos0}}, shape, out.data(), pool);
      best_cpu = std::min(best_cpu, cpu_seconds() - c0);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double per_layer = best / layers, cpu_per_layer = best_cpu / layers;
    const double bytes = 2.0 * shape.n_kv_heads * double(L) * double(cache.row_bytes());
    std::printf("attention shape=%d/%dx%d kv=%s threads=%d batch=%d L=%d us_per_layer=%.1f GBps=%.2f "
                "cpu_us_per_layer=%.1f cpu_GBps=%.2f\n",
                shape.n_q_heads, shape.n_kv_heads, shape.head_dim, kv_type.c_str(), threads, B, L, per_layer * 1e6,
                bytes / per_layer / 1e9, cpu_per_layer * 1e6, bytes / cpu_per_layer / 1e9);
    std::fflush(stdout);
  }
  return 0;
}
