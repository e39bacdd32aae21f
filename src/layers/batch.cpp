#include "layers/batch.h"

#include <algorithm>

namespace r1pi {

void Batch::add(int32_t token, int seq, int pos, bool want_logits) {
  tokens.push_back(token);
  seqs.push_back(seq);
  positions.push_back(pos);
  logits.push_back(want_logits ? 1 : 0);
}

void Batch::add_run(const int32_t* run, int n, int seq, int pos, LogitsFor which) {
  for (int i = 0; i < n; ++i)
    add(run[i], seq, pos + i, which == LogitsFor::All || (which == LogitsFor::Last && i == n - 1));
}

Batch Batch::run(const int32_t* tokens, int n, int pos, LogitsFor which, int seq) {
  Batch b;
  b.add_run(tokens, n, seq, pos, which);
  return b;
}

int Batch::n_logits() const { return int(std::count(logits.begin(), logits.end(), uint8_t(1))); }

void Batch::clear() {
  tokens.clear();
  seqs.clear();
  positions.clear();
  logits.clear();
}

std::vector<BatchRun> runs_of(const Batch& b) {
  std::vector<BatchRun> runs;
  for (int i = 0; i < b.size(); ++i) {
    if (!runs.empty()) {
      BatchRun& r = runs.back();
      if (b.seqs[size_t(i)] == r.seq && b.positions[size_t(i)] == r.pos + r.count) {
        ++r.count;
        continue;
      }
    }
    runs.push_back({i, 1, b.seqs[size_t(i)], b.positions[size_t(i)]});
  }
  return runs;
}

}  // namespace r1pi
