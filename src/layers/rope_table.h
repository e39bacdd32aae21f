// cos/sin of every rotation angle, computed once per process in double precision and rounded to
// float, so that every backend (and x86 vs ARM libm) sees the same table.
//   theta(pos, i) = pos * base^(-2i / rope_dim) / freq_factor[i]   (llama.cpp's RoPE with llama3
//   frequency factors). Pairs beyond rope_dim/2 get cos 1, sin 0: they are not rotated.
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
  RopeTable(const ModelConfig& config, int n_ctx);
  const float* cos_at(int pos) const { return cos_.data() + size_t(pos) * pairs_; }
  const float* sin_at(int pos) const { return sin_.data() + size_t(pos) * pairs_; }
  // Rotates n_heads heads of x (head_dim apart) to position pos with kern's rope kernel.
  void rotate(float* x, int n_heads, int pos, const Kernels& kern) const;

 private:
  bool halves_;
  size_t pairs_;
  std::vector<float> cos_, sin_;
};

}  // namespace r1pi
