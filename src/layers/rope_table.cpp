#include "layers/rope_table.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/architecture.h"

namespace r1pi {

namespace {

// YaRN (ggml's ggml_rope_yarn_corr_dims and rope_yarn_ramp, ext_factor 1, betas 32 and 1): pair i
// keeps its frequency below the pair `low`, takes it divided by the factor above `high`, and
// mixes the two linearly between; low and high are where a pair turns 32 and 1 times in the
// original context, rounded outwards as ggml rounds them.
double yarn_mix(const ModelConfig& c, size_t i) {
  const double dims = c.rope_dim, base = c.rope_base, original = c.yarn_original_context;
  auto corr_dim = [&](double rotations) {
    return dims * std::log(original / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
  };
  const double low = std::max(0.0, std::floor(corr_dim(32.0)));
  const double high = std::min(dims - 1.0, std::ceil(corr_dim(1.0)));
  const double ramp = 1.0 - std::clamp((double(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
  return (1.0 / c.yarn_factor) * (1.0 - ramp) + ramp;
}

}  // namespace

RopeTable::RopeTable(const ModelConfig& config)
    : halves_(config.arch->rope == RopeLayout::NeoxHalves), pairs_(config.head_dim / 2), inv_freq_(config.rope_dim / 2),
      mscale_(config.yarn_factor > 0 ? 1.0 + 0.1 * std::log(double(config.yarn_factor)) : 1.0) {
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    inv_freq_[i] = std::pow(double(config.rope_base), -2.0 * double(i) / double(config.rope_dim));
    if (!config.rope_freq_factors.empty()) inv_freq_[i] /= double(config.rope_freq_factors[i]);
    if (config.yarn_factor > 0) inv_freq_[i] *= yarn_mix(config, i);
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
      cos_[p * pairs_ + i] = float(std::cos(theta) * mscale_);
      sin_[p * pairs_ + i] = float(std::sin(theta) * mscale_);
    }
}

void RopeTable::rotate(float* x, int n_heads, int pos, const Kernels& kern) {
  compute_rows_to(pos);
  const size_t row = size_t(pos) * pairs_;
  (halves_ ? kern.rope_neox : kern.rope)(x, n_heads, int64_t(pairs_ * 2), cos_.data() + row, sin_.data() + row);
}

}  // namespace r1pi
