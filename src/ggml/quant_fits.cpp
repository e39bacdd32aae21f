#include "ggml/quant_fits.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/round_even.h"

namespace r1pi {

namespace {

constexpr int kMaxN = 32;

// Four lanes: GCC's and clang's generic vectors, one SSE2 or NEON register each (the baseline
// builds' widest; GCC split eight-lane integer compares into scalar code). Each lane's arithmetic
// is IEEE float, as the scalar code's. Eight sub-blocks are two passes.
constexpr int kLanes = 4;
using F8 = float __attribute__((vector_size(16)));
using I8 = int32_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline F8 splat(float v) { return F8{v, v, v, v}; }
[[gnu::always_inline]] inline I8 splat_int(int32_t v) { return I8{v, v, v, v}; }
[[gnu::always_inline]] inline F8 as_float(I8 v) { return __builtin_bit_cast(F8, v); }
[[gnu::always_inline]] inline I8 as_int(F8 v) { return __builtin_bit_cast(I8, v); }
// Lanes of mask (all ones or zero) pick a, the others b.
[[gnu::always_inline]] inline F8 select(I8 mask, F8 a, F8 b) { return as_float((mask & as_int(a)) | (~mask & as_int(b))); }
[[gnu::always_inline]] inline I8 select(I8 mask, I8 a, I8 b) { return (mask & a) | (~mask & b); }
[[gnu::always_inline]] inline I8 imin(I8 a, I8 b) { return select(a < b, a, b); }
[[gnu::always_inline]] inline I8 imax(I8 a, I8 b) { return select(a > b, a, b); }
[[gnu::always_inline]] inline F8 to_float(I8 v) { return __builtin_convertvector(v, F8); }
[[gnu::always_inline]] inline F8 fabs8(F8 v) { return as_float(as_int(v) & splat_int(0x7fffffff)); }
[[gnu::always_inline]] inline bool any(I8 mask) {
  for (int j = 0; j < kLanes; ++j)
    if (mask[j]) return true;
  return false;
}
// nearest_int (round_even.h) in every lane.
[[gnu::always_inline]] inline I8 nearest8(F8 v) {
  return (as_int(v + splat(12582912.0f)) & splat_int(0x007fffff)) - splat_int(0x00400000);
}

// x[j * n + i] as lane j of out[i].
void transpose(const float* x, int n, F8* out) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < kLanes; ++j) out[i][j] = x[j * n + i];
}

}  // namespace

Fit fit_with_offset(const float* x, const float* w, uint8_t* L, int n, int nmax, float rmin, float rdelta,
                    int nstep, bool use_mad) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(L, L + n, uint8_t(0));
    return {0.0f, -lo};
  }
  float offset = lo;
  auto quant = [nmax, &offset](float iscale, float v) {
    return uint8_t(std::max(0, std::min(nmax, nearest_int(iscale * (v - offset)))));
  };
  auto error = [&](float scale, float offset, const uint8_t* q) {
    float e = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = (scale * float(q[i]) + offset) - x[i];
      e += w[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  float iscale = float(nmax) / (hi - lo);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) L[i] = quant(iscale, x[i]);
  float best = error(scale, offset, L);
  uint8_t trial[kMaxN];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (hi - offset);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      trial[i] = quant(iscale, x[i]);
      const float wl = w[i] * float(trial[i]);
      sum_l += wl;
      sum_l2 += wl * float(trial[i]);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0.0f)) continue;
    float s = (sum_w * sum_xl - sum_x * sum_l) / det;
    float o = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (o > 0.0f) {
      o = 0.0f;
      s = sum_xl / sum_l2;
    }
    const float e = error(s, o, trial);
    if (e < best) {
      std::memcpy(L, trial, size_t(n));
      best = e;
      scale = s;
      offset = o;
    }
  }
  return {scale, -offset};
}

namespace {

// fit_with_offset's steps lane by lane. Where the scalar code returns early (a flat sub-block) or
// skips a trial (det <= 0), the lane computes on and its results are not taken.
void fit_with_offset_lanes(const float* x, const float* w, uint8_t* L, Fit* fits, int n, int nmax, float rmin,
                           float rdelta, int nstep, bool use_mad) {
  F8 xt[kMaxN] = {}, wt[kMaxN] = {};
  transpose(x, n, xt);
  transpose(w, n, wt);
  F8 lo = xt[0], hi = xt[0];
  F8 sum_w = wt[0];
  F8 sum_x = sum_w * xt[0];
  for (int i = 1; i < n; ++i) {
    lo = select(xt[i] < lo, xt[i], lo);
    hi = select(xt[i] > hi, xt[i], hi);
    sum_w += wt[i];
    sum_x += wt[i] * xt[i];
  }
  const F8 zero = splat(0.0f);
  lo = select(lo > zero, zero, lo);
  const I8 flat = hi == lo;
  F8 offset = lo;
  const I8 top = splat_int(nmax), bottom = splat_int(0);
  auto quant = [&](F8 iscale, F8 v) { return imax(bottom, imin(top, nearest8(iscale * (v - offset)))); };
  auto error = [&](F8 scale, F8 off, const I8* q) {
    F8 e = zero;
    for (int i = 0; i < n; ++i) {
      const F8 diff = (scale * to_float(q[i]) + off) - xt[i];
      e += wt[i] * (use_mad ? fabs8(diff) : diff * diff);
    }
    return e;
  };
  F8 iscale = splat(float(nmax)) / (hi - lo);
  F8 scale = splat(1.0f) / iscale;
  I8 best_l[kMaxN], trial[kMaxN];
  for (int i = 0; i < n; ++i) best_l[i] = quant(iscale, xt[i]);
  F8 best = error(scale, offset, best_l);
  for (int is = 0; is <= nstep; ++is) {
    iscale = splat(rmin + rdelta * float(is) + float(nmax)) / (hi - offset);
    F8 sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (int i = 0; i < n; ++i) {
      trial[i] = quant(iscale, xt[i]);
      const F8 l = to_float(trial[i]);
      const F8 wl = wt[i] * l;
      sum_l += wl;
      sum_l2 += wl * l;
      sum_xl += wl * xt[i];
    }
    const F8 det = sum_w * sum_l2 - sum_l * sum_l;
    const I8 usable = det > zero;
    if (!any(usable)) continue;
    F8 s = (sum_w * sum_xl - sum_x * sum_l) / det;
    F8 o = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    const I8 positive = o > zero;
    s = select(positive, sum_xl / sum_l2, s);
    o = select(positive, zero, o);
    const F8 e = error(s, o, trial);
    const I8 wins = usable & (e < best);
    if (!any(wins)) continue;
    best = select(wins, e, best);
    for (int i = 0; i < n; ++i) best_l[i] = select(wins, trial[i], best_l[i]);
    scale = select(wins, s, scale);
    offset = select(wins, o, offset);
  }
  for (int j = 0; j < kLanes; ++j) {
    for (int i = 0; i < n; ++i) L[j * n + i] = flat[j] ? 0 : uint8_t(best_l[i][j]);
    fits[j] = flat[j] ? Fit{0.0f, -lo[j]} : Fit{scale[j], -offset[j]};
  }
}

}  // namespace

void fit_with_offset_x8(const float* x, const float* w, uint8_t* L, Fit* fits, int n, int nmax, float rmin,
                        float rdelta, int nstep, bool use_mad) {
  for (int k = 0; k < 8; k += kLanes)
    fit_with_offset_lanes(x + k * n, w + k * n, L + k * n, fits + k, n, nmax, rmin, rdelta, nstep, use_mad);
}

float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0.0f;
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  auto quant = [nmax](float iscale, float v) {
    return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * v)));
  };
  float iscale = float(-nmax) / max;
  float sumlx = 0.0f;
  float suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = quant(iscale, x[i]);
    L[i] = int8_t(l + nmax);
    const float w = x[i] * x[i];
    sumlx += (w * x[i]) * float(l);
    suml2 += (w * float(l)) * float(l);
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sumlx = suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = quant(iscale, x[i]);
      const float w = x[i] * x[i];
      sumlx += (w * x[i]) * float(l);
      suml2 += (w * float(l)) * float(l);
    }
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + quant(iscale, x[i]));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

namespace {

void make_qx_quants_lanes(int n, int nmax, const float* x, int8_t* L, float* scales) {
  F8 xt[kMaxN] = {};
  transpose(x, n, xt);
  const F8 zero = splat(0.0f);
  F8 max = zero, amax = zero;
  for (int i = 0; i < n; ++i) {
    const F8 ax = fabs8(xt[i]);
    const I8 larger = ax > amax;
    amax = select(larger, ax, amax);
    max = select(larger, xt[i], max);
  }
  const I8 flat = amax < splat(kGroupMaxEps);
  const I8 low = splat_int(-nmax), high = splat_int(nmax - 1);
  auto quant = [&](F8 iscale, F8 v) { return imax(low, imin(high, nearest8(iscale * v))); };
  F8 w[kMaxN];
  for (int i = 0; i < n; ++i) w[i] = xt[i] * xt[i];
  I8 best_l[kMaxN], trial[kMaxN];
  // The sums of one scale's integers, as the scalar code adds them.
  auto sums = [&](F8 iscale, I8* q, F8& sumlx, F8& suml2) {
    sumlx = suml2 = zero;
    for (int i = 0; i < n; ++i) {
      q[i] = quant(iscale, xt[i]);
      const F8 l = to_float(q[i]);
      sumlx += (w[i] * xt[i]) * l;
      suml2 += (w[i] * l) * l;
    }
  };
  F8 sumlx, suml2;
  sums(splat(float(-nmax)) / max, best_l, sumlx, suml2);
  F8 scale = select(suml2 != zero, sumlx / suml2, zero);
  F8 best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    sums(splat(-(float(nmax) + 0.1f * float(is))) / max, trial, sumlx, suml2);
    const I8 wins = (suml2 > zero) & (sumlx * sumlx > best * suml2);
    if (!any(wins)) continue;
    for (int i = 0; i < n; ++i) best_l[i] = select(wins, trial[i], best_l[i]);
    scale = select(wins, sumlx / suml2, scale);
    best = select(wins, scale * sumlx, best);
  }
  for (int j = 0; j < kLanes; ++j) {
    for (int i = 0; i < n; ++i) L[j * n + i] = flat[j] ? 0 : int8_t(best_l[i][j] + nmax);
    scales[j] = flat[j] ? 0.0f : scale[j];
  }
}

}  // namespace

void make_qx_quants_x8(int n, int nmax, const float* x, int8_t* L, float* scales) {
  for (int k = 0; k < 8; k += kLanes) make_qx_quants_lanes(n, nmax, x + k * n, L + k * n, scales + k);
}

}  // namespace r1pi
