#include "benchmark/bench_report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace r1pi {

std::string moved_hash_problem(const std::vector<std::string>& hashes) {
  for (size_t i = 1; i < hashes.size(); ++i)
    if (hashes[i] != hashes[0])
      return "the sha256 of the generated ids moved in repetition " + std::to_string(i + 1) + " of " +
             std::to_string(hashes.size()) + " (" + hashes[i] + ", the first was " + hashes[0] + ")";
  return "";
}

MeanSd mean_sd(const std::vector<double>& v) {
  MeanSd r;
  if (v.empty()) return r;
  for (double x : v) r.mean += x;
  r.mean /= double(v.size());
  if (v.size() < 2) return r;
  double ss = 0;
  for (double x : v) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / double(v.size() - 1));
  return r;
}

BenchFormat parse_bench_format(const std::string& name) {
  if (name == "md") return BenchFormat::Md;
  if (name == "csv") return BenchFormat::Csv;
  if (name == "json") return BenchFormat::Json;
  if (name == "jsonl") return BenchFormat::Jsonl;
  throw Error("-o " + name + ": give md, csv, json or jsonl");
}

namespace {

// Per-test figures, from the samples.
struct Figures {
  std::vector<double> ns, ts, pred_ms, sync_ms;  // per sample; the times per measured token
  MeanSd rate, pred, sync;
  double gbps = 0;  // weights read per second on rank 0 (decode tests only, else 0)
};

Figures figures(const TestResult& r) {
  const BenchModel& m = r.model;
  Figures f;
  const double tokens = r.test.n_prompt + r.test.n_gen;
  for (const BenchSample& s : r.samples) {
    f.ns.push_back(s.seconds * 1e9);
    f.ts.push_back(tokens / s.seconds);
    f.pred_ms.push_back(s.pred_seconds * 1e3 / tokens);
    f.sync_ms.push_back(s.sync_seconds * 1e3 / tokens);
  }
  f.rate = mean_sd(f.ts);
  f.pred = mean_sd(f.pred_ms);
  f.sync = mean_sd(f.sync_ms);
  // A decode forward reads every matrix once; a prefill batch, like a verified draft, shares the
  // read among its tokens (so speculating tests have no figure).
  if (r.test.n_prompt == 0 && !r.test.config.spec) f.gbps = f.rate.mean * double(m.weight_bytes_per_token) / 1e9;
  return f;
}

std::string human(double value, const char* const units[3], double base) {
  char buf[32];
  int i = 0;
  while (i < 2 && value >= base) value /= base, ++i;
  std::snprintf(buf, sizeof buf, "%.2f %s", value, units[i]);
  return buf;
}

// Draft tokens verified and accepted over a test's samples.
std::pair<int, int> draft_counts(const TestResult& r) {
  int drafted = 0, accepted = 0;
  for (const BenchSample& s : r.samples) drafted += s.drafted, accepted += s.accepted;
  return {drafted, accepted};
}

// "0", or "1" with the accepted share of the drafted tokens over the test's samples.
std::string spec_text(const TestResult& r) {
  if (!r.test.config.spec) return "0";
  const auto [drafted, accepted] = draft_counts(r);
  char buf[48];
  std::snprintf(buf, sizeof buf, "1 (%.0f%% of %d)", drafted ? 100.0 * accepted / drafted : 0.0, drafted);
  return buf;
}

std::string size_text(uint64_t bytes) {
  static const char* const units[3] = {"KiB", "MiB", "GiB"};
  return human(bytes / 1024.0, units, 1024);
}

std::string params_text(uint64_t params) {
  static const char* const units[3] = {"K", "M", "B"};
  return human(params / 1e3, units, 1e3);
}

// As llama-bench shows a parameter's column only when it is set, the spec column (with the share
// of drafted tokens accepted) appears when a test speculates, type_k when a cache is not f32.
void print_md(std::FILE* out, const std::vector<TestResult>& results) {
  auto any = [&](auto pred) { return std::any_of(results.begin(), results.end(), pred); };
  const bool ranks = any([](const TestResult& r) { return r.model.n_ranks > 1; });
  const bool spec = any([](const TestResult& r) { return r.test.config.spec != 0; });
  const bool kv = any([](const TestResult& r) { return r.test.config.kv != 0; });
  std::fprintf(out, "| model | size | params | backend | ranks | threads | n_batch |%s%s test | t/s |%s GB/s/rank |\n",
               kv ? " type_k |" : "", spec ? " spec |" : "", ranks ? " Pred ms/tok | Sync ms/tok |" : "");
  std::fprintf(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: |%s%s ---: | ---: |%s ---: |\n", kv ? " --- |" : "",
               spec ? " ---: |" : "", ranks ? " ---: | ---: |" : "");
  for (const TestResult& r : results) {
    const BenchModel& m = r.model;
    std::fprintf(out, "| %s | %s | %s | %s | %d | %d | %d | ", m.type.c_str(), size_text(m.file_bytes).c_str(),
                 params_text(m.params).c_str(), m.backend.c_str(), m.n_ranks, r.test.config.threads,
                 r.test.config.batch);
    if (kv) std::fprintf(out, "%s | ", kBenchKvTypes[r.test.config.kv].c_str());
    if (spec) std::fprintf(out, "%s | ", spec_text(r).c_str());
    std::fprintf(out, "%s | ", r.test.name().c_str());
    if (!r.error.empty()) {
      std::fprintf(out, "error: %s |%s |\n", r.error.c_str(), ranks ? " | |" : "");
      continue;
    }
    const Figures f = figures(r);
    std::fprintf(out, "%.2f ± %.2f |", f.rate.mean, f.rate.sd);
    if (ranks) std::fprintf(out, " %.3f | %.3f |", f.pred.mean, f.sync.mean);
    if (f.gbps > 0)
      std::fprintf(out, " %.2f |\n", f.gbps);
    else
      std::fprintf(out, " |\n");
  }
}

// A failed test keeps its settings and error; its numbers are null.
nlohmann::ordered_json record(const TestResult& r) {
  const BenchModel& m = r.model;
  const Figures f = figures(r);
  const auto [drafted, accepted] = draft_counts(r);
  nlohmann::ordered_json j = {{"model_type", m.type},
          {"model_size", m.file_bytes},
          {"model_n_params", m.params},
          {"backend", m.backend},
          {"n_ranks", m.n_ranks},
          {"n_threads", r.test.config.threads},
          {"n_batch", r.test.config.batch},
          {"type_k", kBenchKvTypes[r.test.config.kv]},
          {"type_v", kBenchKvTypes[r.test.config.kv]},
          {"n_prompt", r.test.n_prompt},
          {"n_gen", r.test.n_gen},
          {"n_depth", r.test.config.depth},
          {"spec", r.test.config.spec != 0},
          {"spec_drafted", drafted},
          {"spec_accepted", accepted},
          {"test", r.test.name()},
          {"weight_bytes_per_token", m.weight_bytes_per_token},
          {"sha256", r.sha256},
          {"error", r.error}};
  if (!r.error.empty()) {
    for (const char* key : {"avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "avg_pred_ms", "avg_sync_ms", "gbps_per_rank",
                            "samples_ns", "samples_ts", "samples_pred_ms", "samples_sync_ms"})
      j[key] = nullptr;
    return j;
  }
  const MeanSd ns = mean_sd(f.ns);
  j.update(nlohmann::ordered_json{{"avg_ns", ns.mean},
                                  {"stddev_ns", ns.sd},
                                  {"avg_ts", f.rate.mean},
          {"stddev_ts", f.rate.sd},
          {"avg_pred_ms", f.pred.mean},
          {"avg_sync_ms", f.sync.mean},
          {"gbps_per_rank", f.gbps},
          {"samples_ns", f.ns},
          {"samples_ts", f.ts},
          {"samples_pred_ms", f.pred_ms},
          {"samples_sync_ms", f.sync_ms}});
  return j;
}

// The csv columns: the record's scalars; the sample lists as "a;b;c" (one field each).
void print_csv(std::FILE* out, const std::vector<TestResult>& results) {
  bool header = true;
  for (const TestResult& r : results) {
    const nlohmann::ordered_json j = record(r);
    std::string names, values;
    for (const auto& [key, value] : j.items()) {
      std::string text;
      if (value.is_array()) {
        for (const auto& x : value) {
          if (!text.empty()) text += ';';
          text += x.dump();
        }
      } else if (value.is_string()) {
        text = value.get<std::string>();
      } else if (!value.is_null()) {
        text = value.dump();
      }
      if (!names.empty()) names += ',', values += ',';
      names += key;
      values += '"';
      for (char c : text) values += c == '"' ? std::string("\"\"") : std::string(1, c);  // CSV's quote
      values += '"';
    }
    if (header) std::fprintf(out, "%s\n", names.c_str());
    header = false;
    std::fprintf(out, "%s\n", values.c_str());
  }
}

}  // namespace

void print_results(std::FILE* out, BenchFormat format, const std::vector<TestResult>& results) {
  switch (format) {
    case BenchFormat::Md: print_md(out, results); break;
    case BenchFormat::Csv: print_csv(out, results); break;
    case BenchFormat::Json: {
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const TestResult& r : results) all.push_back(record(r));
      std::fprintf(out, "%s\n", all.dump(2).c_str());
      break;
    }
    case BenchFormat::Jsonl:
      for (const TestResult& r : results) std::fprintf(out, "%s\n", record(r).dump().c_str());
      break;
  }
}

}  // namespace r1pi
