#include "layers/rope_table.h"

#include <cmath>

#include "model/architecture.h"

namespace r1pi {

RopeTable::RopeTable(const ModelConfig& config, int n_ctx)
    : halves_(config.arch->rope == RopeLayout::NeoxHalves), pairs_(config.head_dim / 2) {
  cos_.assign(size_t(n_ctx) * pairs_, 1.0f);
  sin_.assign(size_t(n_ctx) * pairs_, 0.0f);
  const size_t rotated = config.rope_dim / 2;
  std::vector<double> inv_freq(rotated);
  for (size_t i = 0; i < rotated; ++i) {
    inv_freq[i] = std::pow(double(config.rope_base), -2.0 * double(i) / double(config.rope_dim));
    if (!config.rope_freq_factors.empty()) inv_freq[i] /= double(config.rope_freq_factors[i]);
  }
  for (int pos = 0; pos < n_ctx; ++pos)
    for (size_t i = 0; i < rotated; ++i) {
      const double theta = double(pos) * inv_freq[i];
      cos_[size_t(pos) * pairs_ + i] = float(std::cos(theta));
      sin_[size_t(pos) * pairs_ + i] = float(std::sin(theta));
    }
}

void RopeTable::rotate(float* x, int n_heads, int pos, const Kernels& kern) const {
  (halves_ ? kern.rope_neox : kern.rope)(x, n_heads, int64_t(pairs_ * 2), cos_at(pos), sin_at(pos));
}

}  // namespace r1pi
