// r1pi-bench's results and their output: llama-bench's table (md) and the raw samples (csv, json,
// jsonl). A test whose generated ids moved between repetitions is an error, never a number.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "benchmark/bench_params.h"

namespace r1pi {

struct BenchSample {
  double seconds = 0;        // the measured tokens' forwards (the depth's prefill excluded)
  double pred_seconds = 0;   // their Pred and Sync shares on rank 0
  double sync_seconds = 0;
  std::string sha256;        // of the generated ids
  int drafted = 0;           // speculative decoding: draft tokens verified, and accepted
  int accepted = 0;
};

struct BenchModel {
  std::string type;              // llama-bench's model column: "llama 8B Q4_0"
  uint64_t file_bytes = 0;
  uint64_t params = 0;
  std::string backend;           // the kernels
  int n_ranks = 1;
  uint64_t weight_bytes_per_token = 0;  // matrices rank 0 reads per decode forward
};

struct TestResult {
  BenchTest test;
  std::string sha256;               // the first repetition's (the warm-up's)
  std::vector<BenchSample> samples; // the repetitions after the warm-up
  std::string error;                // non-empty: the test failed (its numbers are not reported)
  BenchModel model;                 // the file it ran on (r1pi-bench takes several -m)
};

// The first repetition whose hash differs from the first one's, as an error text ("" if none).
std::string moved_hash_problem(const std::vector<std::string>& hashes);

struct MeanSd {
  double mean = 0, sd = 0;  // sd: sample standard deviation (n - 1), 0 for one value
};
MeanSd mean_sd(const std::vector<double>& values);

enum class BenchFormat { Md, Csv, Json, Jsonl };
BenchFormat parse_bench_format(const std::string& name);  // throws r1pi::Error

// One table (md) or list (csv, json, jsonl) for every model's results.
void print_results(std::FILE* out, BenchFormat format, const std::vector<TestResult>& results);

}  // namespace r1pi
