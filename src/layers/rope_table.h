// cos/sin of every rotation angle, computed in double precision and rounded to float, so that
// every backend (and x86 vs ARM libm) sees the same table.
//   theta(pos, i) = pos * base^(-2i / rope_dim) / freq_factor[i]   (llama.cpp's RoPE with llama3
//   frequency factors). Pairs beyond rope_dim/2 get cos 1, sin 0: they are not rotated.
//   With YaRN (gpt-oss) pair i's frequency is mixed with itself divided by the factor (yarn_mix in
//   rope_table.cpp), and cos and sin are both scaled by 1 + 0.1 ln(factor), as ggml's rope_yarn
//   leaves them after llama.cpp's own correction (ARCH_FACTS.md, gpt-oss, 4.1).
// A position's row is computed when a forward first reaches it, as the KV cache takes a
// position's memory: a short run with -c 1000000 computes and holds a few rows, not a million
// (128 MB and seconds of sin/cos on the tiny model). The values are the same either way.
// rotate() pairs a head's elements as the architecture's RoPE layout says: adjacent (x[2i],
// x[2i+1]), or halves (x[i], x[i + head_dim/2]; the config allows it only over whole heads).
#pragma once
#include <cstdint>
#include <vector>

#include "model/model_config.h"
#include "neon/kernels.h"

namespace r1pi {

class RopeTable {
 public:
  explicit RopeTable(const ModelConfig& config);
  // Rotates n_heads heads of x (head_dim apart) to position pos with kern's rope kernel.
  void rotate(float* x, int n_heads, int pos, const Kernels& kern);

 private:
  void compute_rows_to(int pos);  // rows up to pos, where not yet computed

  bool halves_;
  size_t pairs_;
  std::vector<double> inv_freq_;  // per rotated pair
  double mscale_;                 // YaRN's factor on cos and sin (1 without it)
  std::vector<float> cos_, sin_;  // pairs_ per position, for positions 0 .. rows - 1
};

}  // namespace r1pi
