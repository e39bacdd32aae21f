// The kernel recipe of kernels.h re-implemented independently, and the double-precision references
// with their rounding bounds: what the scalar kernel tests (test_kernels_scalar*.cpp) check each
// dot product against.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ggml/ggml_type.h"
#include "ggml/quantize.h"

namespace r1pi::test {

constexpr double kU = 0x1p-24;  // unit roundoff of float

// gamma_k = k u / (1 - k u): the classic bound on k successive roundings.
inline double gamma_k(int64_t k) { return double(k) * kU / (1.0 - double(k) * kU); }

// Float accumulation in the recipe: ceil(terms / 8) fmas per lane, then 3 levels of reduce8.
inline double accumulation_bound(int64_t terms) { return gamma_k((terms + 7) / 8 + 3); }

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ---- the recipe, re-implemented independently -------------------------------------------------

inline float recipe_reduce8(const float* a) {
  const float even = (a[0] + a[4]) + (a[2] + a[6]);
  const float odd = (a[1] + a[5]) + (a[3] + a[7]);
  return even + odd;
}

// For each block b and lane j: acc[j] = fma(d_b, p_bj, acc[j]), p_bj the integer products of
// the block's elements 4j .. 4j+3 summed; then reduce8. scale(b) gives d_b, product(b, i) the
// integer product of element i of block b.
template <class Scale, class Product>
inline float recipe_quant_dot(int64_t nb, Scale scale, Product product) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t b = 0; b < nb; ++b) {
    for (int j = 0; j < 8; ++j) {
      const int32_t p =
          product(b, 4 * j) + product(b, 4 * j + 1) + product(b, 4 * j + 2) + product(b, 4 * j + 3);
      acc[j] = std::fma(scale(b), float(p), acc[j]);
    }
  }
  return recipe_reduce8(acc);
}

// Quantised dots have 8 lane sums per block: n / 4 terms of the float accumulation.
inline double quant_accumulation_bound(int64_t n) { return accumulation_bound(n / 4); }

inline float recipe_float_dot(int64_t n, const float* a, const float* b) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) acc[i % 8] = std::fma(a[i], b[i], acc[i % 8]);
  return recipe_reduce8(acc);
}

// ---- double references --------------------------------------------------------------------

struct Reference {
  double value = 0.0;    // sum of w[i] * x[i] in double (each product exact)
  double abs_sum = 0.0;  // sum of |w[i] * x[i]|, the scale of every rounding bound
};

inline Reference reference_dot(const std::vector<float>& w, const std::vector<float>& x) {
  Reference r;
  for (size_t i = 0; i < w.size(); ++i) {
    r.value += double(w[i]) * x[i];
    r.abs_sum += std::fabs(double(w[i]) * x[i]);
  }
  return r;
}

inline std::vector<float> dequant(GgmlType type, const void* q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(type, q, y.data(), n);
  return y;
}

}  // namespace r1pi::test
