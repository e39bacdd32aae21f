#include "layers/rope_table.h"

#include <cmath>

#include "model/architecture.h"

namespace r1pi {

RopeTable::RopeTable(const ModelConfig& config)
    : halves_(config.arch->rope == RopeLayout::NeoxHalves), pairs_(config.head_dim / 2), inv_freq_(config.rope_dim / 2) {
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    inv_freq_[i] = std::pow(double(config.rope_base), -2.0 * double(i) / double(config.rope_dim));
    if (!config.rope_freq_factors.empty()) inv_freq_[i] /= double(config.rope_freq_factors[i]);
  }
}

void RopeTable::compute_rows_to(int pos) {
  const size_t first = cos_.size() / pairs_, rows = size_t(pos) + 1;
  if (rows <= first) return;
  cos_.resize(rows * pairs_, 1.0f);
  sin_.resize(rows * pairs_, 0.0f);
  for (size_t p = first; p < rows; ++p)
    for (size_t i = 0; i < inv_freq_.size(); ++i) {
      const double theta = double(p) * inv_freq_[i];
      cos_[p * pairs_ + i] = float(std::cos(theta));
      sin_[p * pairs_ + i] = float(std::sin(theta));
    }
}

void RopeTable::rotate(float* x, int n_heads, int pos, const Kernels& kern) {
  compute_rows_to(pos);
  const size_t row = size_t(pos) * pairs_;
  (halves_ ? kern.rope_neox : kern.rope)(x, n_heads, int64_t(pairs_ * 2), cos_.data() + row, sin_.data() + row);
}

}  // namespace r1pi
