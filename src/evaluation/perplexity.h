// r1pi-perplexity: how well a model predicts a text, by llama-perplexity's method, and how far its
// logits are from another run's (a quantisation against its F32 file, r1pi against another engine).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/token_source.h"

namespace r1pi {

struct PerplexityOptions {
  // Chunks (llama-perplexity): the ids cut into chunks of n_ctx tokens (a partial last chunk
  // left out), each run from position 0, and the second half of each scored: the logits at
  // positions n_ctx/2 .. n_ctx-2 against the next ids. chunk_bos >= 0: every chunk's first id
  // becomes that token (llama-perplexity with a vocabulary that adds BOS).
  // all_positions (--all-logits): the ids as one teacher-forced sequence, every position kept:
  // row p holds the logits after ids 0..p, scored against id p+1 where there is one.
  int n_ctx = 512;
  bool all_positions = false;
  int32_t chunk_bos = -1;
  int batch = 512;            // tokens per forward
  std::string save_logits;    // the kept rows as raw little-endian float32, n_vocab each, in order
  std::string compare_logits; // a file of such rows to compare the kept rows with
  // Called after each chunk (or batch, with all_positions): positions done, of how many, and the
  // perplexity so far.
  std::function<void(int64_t done, int64_t total, double perplexity)> progress;
};

struct PerplexityResult {
  int64_t kept = 0;     // logits rows kept (and saved)
  int64_t scored = 0;   // of them, rows with a next id
  double perplexity = 0;  // exp(mean negative log-likelihood of the next ids)
  double uncertainty = 0; // its standard error (the NLLs' standard error times the perplexity)
  // With compare_logits: the other rows' perplexity on the same ids, the mean and largest
  // KL(other || this) over the kept rows, and how often both rank the same token first.
  bool compared = false;
  double other_perplexity = 0, kl_mean = 0, kl_max = 0, top1_agreement = 0;
};

// The kept rows' count for ids of n tokens (throws r1pi::Error when the ids do not fill one chunk
// twice, as llama-perplexity asks, or for all_positions exceed the context).
int64_t kept_rows(int64_t n_tokens, const PerplexityOptions& options, int n_ctx_available);

// Runs the ids through source (slot 0, cleared first) and scores them. Throws r1pi::Error for ids
// out of the vocabulary, a comparison file of the wrong size, or a file that cannot be written.
PerplexityResult run_perplexity(TokenSource& source, const std::vector<int32_t>& ids, int64_t n_vocab,
                                const PerplexityOptions& options);

}  // namespace r1pi
