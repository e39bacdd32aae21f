// The cost of one forward pass of B tokens relative to B = 1, and a prefill, on a real model file:
// the numbers behind "a batch of B costs little more than one token while decode is memory-bound"
// and the prefill GOP/s. Prints one parsable line per measurement:
//   model params=... matrix_bytes=...          (the matrices read per token: all but token_embd)
//   forward threads=T B=b ms=... rel_B1=...    (median of --reps forwards at position 32)
//                                              (--logits all: every token's logits, as B streams'
//                                              decode needs; last: one row, as a prefill)
//   prefill threads=T tokens=N s=... tok_s=... GOPs=...   (2 * params * tokens / s)
// Usage: forward_batch MODEL [--threads 1,2] [--batches 1,2,4,8,16] [--reps 5] [--prefill 128]
//        [--logits last|all]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_args.h"
#include "common/error.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "neon/kernels.h"
#include "common/thread_pool.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace r1pi;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MODEL [--threads 1,2] [--batches 1,2,4,8,16] [--reps 5] [--prefill 128]"
                 " [--logits last|all]\n",
                 argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  std::vector<int> threads = {1, 2}, batches = {1, 2, 4, 8, 16};
  int reps = 5, prefill = 128;
  LogitsFor rows = LogitsFor::Last;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") threads = bench::parse_list(argv[i + 1]);
    else if (a == "--batches") batches = bench::parse_list(argv[i + 1]);
    else if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--prefill") prefill = std::max(0, std::atoi(argv[i + 1]));
    else if (a == "--logits") {
      const std::string v = argv[i + 1];
      if (v != "all" && v != "last") {
        std::fprintf(stderr, "--logits takes last or all, not %s\n", v.c_str());
        return 2;
      }
      rows = v == "all" ? LogitsFor::All : LogitsFor::Last;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  try {
    const LoadedModel m = load_model(path);
    // Parameters and bytes of the matrices a token reads (token_embd is only looked up, unless it
    // doubles as the output matrix).
    uint64_t params = 0, bytes = 0;
    auto add = [&](const Matrix& x) {
      params += uint64_t(x.rows) * uint64_t(x.cols);
      bytes += x.bytes();
    };
    for (const LayerWeights& L : m.weights.layers) {
      for (const Matrix* x : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w1, &L.w3, &L.w2}) add(*x);
    }
    add(m.weights.output);
    std::printf("model params=%llu matrix_bytes=%llu kernels=%s\n", (unsigned long long)params,
                (unsigned long long)bytes, kernels().name);
    std::fflush(stdout);

    const int max_b = std::max(prefill, *std::max_element(batches.begin(), batches.end()));
    const int n_ctx = 32 + max_b + 8;
    std::vector<int32_t> tokens(size_t(max_b) + 32);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 7919 + 13) % m.config.n_vocab);

    for (int t : threads) {
      ThreadPool pool(t);
      NoSync sync;
      ModelForward fwd(m.config, m.weights, m.shard, n_ctx, pool, sync);
      fwd.forward(Batch::run(tokens.data(), 32, 0, LogitsFor::Last));  // a context to attend to; warms up
      double t1 = 0;
      for (int B : batches) {
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          fwd.forward(Batch::run(tokens.data() + 32, B, 32, rows));
          times.push_back(seconds_since(t0));
        }
        std::sort(times.begin(), times.end());
        const double med = times[times.size() / 2];
        if (B == batches.front()) t1 = med;
        std::printf("forward threads=%d B=%d ms=%.2f ms_per_token=%.2f rel_B1=%.3f\n", t, B, med * 1e3,
                    med * 1e3 / B, med / t1);
        std::fflush(stdout);
      }
      if (prefill > 0) {
        std::vector<double> times;
        for (int r = 0; r < std::max(1, reps / 2); ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          fwd.forward(Batch::run(tokens.data(), prefill, 0, LogitsFor::Last));
          times.push_back(seconds_since(t0));
        }
        std::sort(times.begin(), times.end());
        const double s = times[times.size() / 2];
        std::printf("prefill threads=%d tokens=%d s=%.3f tok_s=%.2f GOPs=%.1f\n", t, prefill, s,
                    prefill / s, 2.0 * double(params) * prefill / s / 1e9);
        std::fflush(stdout);
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
