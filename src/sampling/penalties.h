// llama.cpp's repetition penalties (its "penalties" sampler, first in its chain): every token that
// occurs c > 0 times among the last last_n tokens of the sequence (prompt included, the token whose
// successor is being picked last) has its logit divided by `repeat` where positive, multiplied by
// it where not, and then lowered by c * frequency + presence. They change logits before any other
// step (greedy included). Each id's new logit depends on that id's logit and the window only, so
// ranks holding slices of the vocabulary apply them to their own rows and then pick as usual:
// the same logits, bit for bit, that one rank holding every row would have.
#pragma once
#include <cstddef>
#include <cstdint>

namespace r1pi {

struct PenaltyParams {
  float repeat = 1.0f;     // 1: off
  int32_t last_n = 64;     // tokens the window holds (0: off; -1: the whole history, llama.cpp's context size)
  float frequency = 0.0f;  // 0: off
  float presence = 0.0f;   // 0: off

  bool active() const { return last_n != 0 && (repeat != 1.0f || frequency != 0.0f || presence != 0.0f); }
  bool operator==(const PenaltyParams&) const = default;
};

// Applies the penalties to logits[0 .. n), the logits of ids first_id .. first_id + n - 1, given the
// history (its last last_n tokens are the window; ids outside the slice are skipped).
void apply_penalties(float* logits, int64_t n, int32_t first_id, const int32_t* history, size_t n_history,
                     const PenaltyParams& params);

}  // namespace r1pi
