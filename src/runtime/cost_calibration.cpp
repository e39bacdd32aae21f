#include "runtime/cost_calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/error.h"

namespace r1pi {

namespace {

double seconds_of(TokenSource& source, const Sampler& sampler, const std::vector<int32_t>& tokens) {
  const auto start = std::chrono::steady_clock::now();
  source.forward(Batch::run(tokens.data(), int(tokens.size()), 0, LogitsFor::All),
                 std::vector<const Sampler*>(tokens.size(), &sampler));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The B measured: every B up to 6, then wider steps (the curve is interpolated between them).
std::vector<int> batches_to_measure(int max_batch) {
  std::vector<int> out;
  for (int B : {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64})
    if (B <= max_batch) out.push_back(B);
  if (out.back() != max_batch) out.push_back(max_batch);
  return out;
}

}  // namespace

CostCurve measure_cost_curve(TokenSource& source, const Sampler& sampler, int max_batch) {
  max_batch = std::min(max_batch, source.n_ctx());
  // Rounds over every B, at least 3 and until each B had about 50 ms (at most 20), keeping each
  // B's fastest time: the machine's noise only ever adds time, and a round that a busy moment
  // slows touches every B alike.
  constexpr int kMinRounds = 3, kMaxRounds = 20;
  constexpr double kSecondsPerBatch = 0.05;
  seconds_of(source, sampler, std::vector<int32_t>(1, 0));  // warm-up
  const std::vector<int> batches = batches_to_measure(max_batch);
  std::vector<double> best(batches.size(), 1e30), spent(batches.size(), 0);
  for (int round = 0; round < kMaxRounds; ++round) {
    if (round >= kMinRounds && *std::min_element(spent.begin(), spent.end()) >= kSecondsPerBatch) break;
    for (size_t i = 0; i < batches.size(); ++i) {
      const double s = seconds_of(source, sampler, std::vector<int32_t>(size_t(batches[i]), 0));
      best[i] = std::min(best[i], s);
      spent[i] += s;
    }
  }
  std::vector<std::pair<int, double>> points;
  for (size_t i = 0; i < batches.size(); ++i) points.emplace_back(batches[i], std::max(best[i], 1e-9));
  // A measured B = 3 faster than B = 2 is noise: a longer batch never costs less.
  for (size_t i = 1; i < points.size(); ++i) points[i].second = std::max(points[i].second, points[i - 1].second);
  return CostCurve::from_points(points);
}

std::string cost_cache_key(const std::string& fingerprint_hex, int n_ranks, int threads,
                           const char* backend, const SamplerParams& sampler) {
  const std::string pick = sampler.temperature <= 0 ? "greedy" : "topk" + std::to_string(sampler.top_k);
  return fingerprint_hex + "-np" + std::to_string(n_ranks) + "-t" + std::to_string(threads) + "-" +
         backend + "-" + pick;
}

std::string cost_cache_dir() {
  if (const char* d = std::getenv("R1PI_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/r1pi";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/r1pi";
  return "";
}

CostCurveChoice choose_cost_curve(const std::string& spec_cost_file, const std::string& cache_key,
                                  int max_batch, TokenSource& source, const Sampler& sampler) {
  if (!spec_cost_file.empty()) return {CostCurve::read(spec_cost_file), "--spec-cost " + spec_cost_file};
  const std::string dir = cost_cache_dir();
  const std::string path = dir.empty() ? "" : dir + "/spec-cost-" + cache_key + ".txt";
  if (!path.empty() && std::filesystem::exists(path)) {
    // A damaged cache file is measured again rather than trusted or fatal.
    try {
      CostCurve cached = CostCurve::read(path);
      if (cached.max_batch() >= max_batch) return {cached, "cached in " + path};
    } catch (const Error&) {
    }
  }
  CostCurve measured = measure_cost_curve(source, sampler, max_batch);
  if (path.empty()) return {measured, "measured (no cache folder: set R1PI_CACHE_DIR)"};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  try {
    measured.write(path);
  } catch (const Error&) {
    return {measured, "measured (cannot write " + path + ")"};
  }
  return {measured, "measured, cached in " + path};
}

}  // namespace r1pi
