// Per-token decode time against context position: what a long reasoning trace pays. Feeds one
// token at a time from position 0 to --tokens (the forward of a greedy generation, without the
// sampler, whose cost does not grow with the position), times every forward and fits
//   t(L) = a + b * L      (least squares over all positions, R^2 of the fit)
// The slope b is what one more position of context costs; the KV cache bytes one position adds
// (all layers, keys and values, this rank's heads) divided by b is the rate at which attention
// reads its cache. On a machine shared with other work the fastest forward of each window of 32
// positions is the better estimate of the unloaded time, so the fit is also made over those
// minima (fit_min). One parsable line per result:
//   depth L=<l> ms=<median of the 64 forwards ending at l>          (every --every positions)
//   fit threads=T points=N a_ms=... b_us=... r2=... kv_bytes_per_pos=... attention_GBps=...
//   fit_min ... (the same over the window minima)
// Usage: decode_depth MODEL [--threads 2] [--tokens 3000] [--every 500] [--dump FILE]
//                     [--kv-type f32|f16|q8_0]
//   --dump writes "position ms" for every forward.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/thread_pool.h"
#include "layers/model_forward.h"
#include "model/model_loader.h"
#include "neon/kernels.h"

namespace {

// Least squares t = a + b L; prints the line described above.
void fit(const char* what, int threads, const std::vector<double>& x, const std::vector<double>& y,
         double kv_bytes_per_pos) {
  const double n = double(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double b = (n * sxy - sx * sy) / (n * sxx - sx * sx), a = (sy - b * sx) / n;
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = y[i] - (a + b * x[i]), d = y[i] - sy / n;
    ss_res += e * e;
    ss_tot += d * d;
  }
  std::printf("%s threads=%d points=%zu a_ms=%.3f b_us=%.4f r2=%.4f kv_bytes_per_pos=%.0f attention_GBps=%.2f\n",
              what, threads, x.size(), a, b * 1e3, 1 - ss_res / ss_tot, kv_bytes_per_pos,
              kv_bytes_per_pos / (b * 1e-3) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace r1pi;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [--threads 2] [--tokens 3000] [--every 500]\n", argv[0]);
    return 2;
  }
  int threads = 2, n = 3000, every = 500;
  std::string dump, kv_type = "f32";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--dump" || a == "--kv-type") {
      (a == "--dump" ? dump : kv_type) = argv[i + 1];
      continue;
    }
    const int v = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--threads") threads = v;
    else if (a == "--tokens") n = v;
    else if (a == "--every") every = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  try {
    const LoadedModel m = load_model(argv[1]);
    ThreadPool pool(threads);
    NoSync sync;
    ModelForward fwd(m.config, m.weights, m.shard, n, pool, sync, kv_cache_type(kv_type));
    std::printf("model kernels=%s threads=%d kv_cache_bytes=%llu\n", kernels().name, threads,
                (unsigned long long)fwd.kv_cache_bytes());
    std::fflush(stdout);
    std::vector<double> ms(static_cast<size_t>(n));
    for (int pos = 0; pos < n; ++pos) {
      const int32_t token = int32_t((uint64_t(pos) * 7919 + 13) % m.config.n_vocab);
      const auto t0 = std::chrono::steady_clock::now();
      fwd.forward(Batch::run(&token, 1, pos, LogitsFor::Last));
      ms[size_t(pos)] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if ((pos + 1) % every == 0) {
        std::vector<double> w(ms.begin() + std::max(0, pos - 63), ms.begin() + pos + 1);
        std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
        std::printf("depth L=%d ms=%.3f\n", pos, w[w.size() / 2]);
        std::fflush(stdout);
      }
    }
    if (!dump.empty()) {
      FILE* f = std::fopen(dump.c_str(), "w");
      if (!f) throw Error("cannot write " + dump);
      for (int L = 0; L < n; ++L) std::fprintf(f, "%d %.4f\n", L, ms[size_t(L)]);
      std::fclose(f);
    }
    std::vector<double> xs, ys, xm, ym;
    for (int L = 0; L < n; ++L) {
      xs.push_back(L);
      ys.push_back(ms[size_t(L)]);
    }
    for (int w = 0; w + 32 <= n; w += 32) {
      const auto best = std::min_element(ms.begin() + w, ms.begin() + w + 32);
      xm.push_back(double(best - ms.begin()));
      ym.push_back(*best);
    }
    const double per_pos = double(fwd.kv_cache_bytes()) / n;
    fit("fit", threads, xs, ys, per_pos);
    fit("fit_min", threads, xm, ym, per_pos);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
