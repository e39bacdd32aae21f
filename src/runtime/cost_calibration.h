// The cost curve c(B) that speculative decoding's policy weighs drafts with, for this run: from
// --spec-cost FILE, else from the cache (a file per model fingerprint, rank count, thread count,
// backend and pick mode), else measured on the loaded model and cached.
#pragma once
#include <string>

#include "runtime/token_source.h"
#include "specdec/cost_curve.h"

namespace r1pi {

// Times forward passes of B = 1 .. max_batch tokens with the picks of every position (what a
// verification costs), a few of each, keeping the fastest. The forwards write the cache at
// positions 0 .. max_batch - 1, which the prefill overwrites: run it before generation.
CostCurve measure_cost_curve(TokenSource& source, const Sampler& sampler, int max_batch);

struct CostCurveChoice {
  CostCurve curve;
  std::string origin;  // "--spec-cost FILE", "cached in FILE" or "measured, cached in FILE"
};

// key: what the cost depends on besides B, as one file-name-safe string.
std::string cost_cache_key(const std::string& fingerprint_hex, int n_ranks, int threads,
                           const char* backend, const SamplerParams& sampler);
// The cache folder: $R1PI_CACHE_DIR, else $XDG_CACHE_HOME/r1pi, else ~/.cache/r1pi.
std::string cost_cache_dir();

CostCurveChoice choose_cost_curve(const std::string& spec_cost_file, const std::string& cache_key,
                                  int max_batch, TokenSource& source, const Sampler& sampler);

}  // namespace r1pi
