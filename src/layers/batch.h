// The tokens of one forward pass: each with the sequence it continues (its KV cache slot), its
// position in that sequence and whether its logits are wanted. One sequence fed in order is a
// prompt chunk, a decode step or a speculative verification; several sequences in one batch share
// the pass's weight reads, and every token gets the bytes it would get with its sequence alone
// (each kernel computes each row on its own, attention reads only the token's own slot).
#pragma once
#include <cstdint>
#include <vector>

namespace r1pi {

enum class LogitsFor { None, Last, All };

struct Batch {
  std::vector<int32_t> tokens, seqs, positions;
  std::vector<uint8_t> logits;  // 1: this token's logits are wanted (a row of the forward's output)

  void add(int32_t token, int seq, int pos, bool want_logits);
  // n tokens of sequence seq at positions pos .. pos + n - 1, with the logits `which` asks for.
  void add_run(const int32_t* tokens, int n, int seq, int pos, LogitsFor which);
  // A batch of that one run.
  static Batch run(const int32_t* tokens, int n, int pos, LogitsFor which, int seq = 0);
  int size() const { return int(tokens.size()); }
  int n_logits() const;
  void clear();
};

// Consecutive tokens of one sequence at consecutive positions: batch[first .. first + count) at
// positions pos .. pos + count - 1 of slot seq. Attention runs on each separately.
struct BatchRun {
  int first, count, seq, pos;
};
std::vector<BatchRun> runs_of(const Batch& batch);

}  // namespace r1pi
