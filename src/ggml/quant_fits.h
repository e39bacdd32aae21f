// The least-squares fits of ggml's K-quant quantisers, as ggml computes them (every product and
// sum a separately rounded float operation in its order), so that r1pi-model writes llama.cpp's
// bytes: make_qkx2_quants (a scale and a min: Q4_K, Q5_K, Q2_K) and make_qx_quants with rmse_type
// 1 (a scale: Q6_K). Each comes one sub-block at a time (the reference) and eight at once, one
// sub-block per lane of 8-float vectors: the same operations in the same order in each lane, so
// the same bits, at a fraction of the time (the fits were most of writing a K-quant file).
#pragma once
#include <cstdint>

namespace r1pi {

// ggml treats groups whose largest magnitude is below this as all zero (its GROUP_MAX_EPS).
inline constexpr float kGroupMaxEps = 1e-15f;

struct Fit {
  float scale;
  float min;  // the offset subtracted (>= 0): x ~ scale * q - min
};

// Fits x[i] ~ scale * L[i] + offset (offset <= 0) with L in 0..nmax, minimising the weighted
// squared error: starts from offset min(x, 0) and the range up to max x, then tries nstep + 1
// scales (rmin + rdelta * is + nmax) / (max x - offset), each with the least-squares scale and
// offset for its integers, keeping the best. As in ggml, a trial that wins moves the offset the
// later trials quantise from and divide by. Errors are squared, or absolute with use_mad (Q2_K).
Fit fit_with_offset(const float* x, const float* w, uint8_t* L, int n, int nmax, float rmin, float rdelta,
                    int nstep, bool use_mad);
// The same for eight sub-blocks of n (at most 32) values: sub-block j is x[j * n ...], its weights
// w[j * n ...], its integers L[j * n ...] and its fit fits[j].
void fit_with_offset_x8(const float* x, const float* w, uint8_t* L, Fit* fits, int n, int nmax, float rmin,
                        float rdelta, int nstep, bool use_mad);

// Quantises n values to integers -nmax..nmax-1 (stored + nmax in L) and returns the scale. Starts
// from the scale that maps the largest-magnitude value to -nmax, then tries 18 nearby scales and
// keeps the one with the best x^2-weighted least-squares fit.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L);
// The same for eight groups of n (at most 32) values: group j is x[j * n ...], L[j * n ...] and
// scales[j].
void make_qx_quants_x8(int n, int nmax, const float* x, int8_t* L, float* scales);

}  // namespace r1pi
