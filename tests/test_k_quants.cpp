// Q4_K and Q5_K, the K-quants with a min term: hand-packed blocks through the dequantisers (every
// scale and min code at 0 and 63, in the plain and the split 6-bit fields, negative d and dmin),
// the reference quantisers (llama.cpp's bytes, round-trip error, zero rows), and the scalar dot
// product, bit for bit against the recipe of kernels.h written out again here and within the
// rounding bound of a double-precision dot product of the dequantised rows. The layout is read
// from the description in KQUANT_FACTS.md, not from src/ggml/q4_K_layout.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/q4_K_layout.h"
#include "ggml/quant_fits.h"
#include "ggml/quantize.h"
#include "kernel_inputs.h"
#include "kernel_recipe.h"
#include "neon/kernels.h"
#include "test_support.h"
#include <bit>

namespace r1pi {
namespace {

using namespace test;

// ---- the layout, from its description -----------------------------------------------------------

struct Codes {
  int sc[8];
  int m[8];
};

// Sub-block j's 6-bit scale and min: j < 4 in the low 6 bits of scales[j] and scales[j + 4]; j >= 4
// low 4 bits in the nibbles of scales[j + 4], top 2 bits in the top bits of scales[j - 4] (scale)
// and scales[j] (min).
Codes read_codes(const uint8_t* s) {
  Codes c{};
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      c.sc[j] = s[j] % 64;
      c.m[j] = s[j + 4] % 64;
    } else {
      c.sc[j] = s[j + 4] % 16 + 16 * (s[j - 4] / 64);
      c.m[j] = s[j + 4] / 16 + 16 * (s[j] / 64);
    }
  }
  return c;
}

void write_codes(const Codes& c, uint8_t* s) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = uint8_t(s[j] + c.sc[j]);
      s[j + 4] = uint8_t(s[j + 4] + c.m[j]);
    } else {
      s[j + 4] = uint8_t(c.sc[j] % 16 + 16 * (c.m[j] % 16));
      s[j - 4] = uint8_t(s[j - 4] + 64 * (c.sc[j] / 16));
      s[j] = uint8_t(s[j] + 64 * (c.m[j] / 16));
    }
  }
}

// Element e's quant: chunk e / 64, low nibble for the first 32 of the chunk; Q5_K adds bit
// 2 * chunk (+1 for the high nibble) of qh[e % 32] as 16.
int q4k_value(const uint8_t* qs, int e) {
  const uint8_t byte = qs[32 * (e / 64) + e % 32];
  return e % 64 < 32 ? byte % 16 : byte / 16;
}
int q5k_value(const block_q5_K& b, int e) {
  const int bit = 2 * (e / 64) + (e % 64 < 32 ? 0 : 1);
  return q4k_value(b.qs, e) + 16 * ((b.qh[e % 32] >> bit) & 1);
}

// Codes with 0 and 63 for scale and min among both j < 4 and j >= 4 (the split fields).
constexpr Codes kExtremeCodes = {{0, 63, 17, 42, 63, 0, 33, 1}, {63, 0, 5, 60, 0, 63, 48, 31}};

// ---- dequantisation ---------------------------------------------------------------------------

// A block for each sign of d (dmin = -d / 2) with kExtremeCodes and quants (7e + 3) mod levels (every
// value 0 .. levels - 1 in every sub-block), put in place by put and read back by get.
template <class Block, class Put, class Get>
void check_hand_packed(void (*dequantize)(const Block*, float*, int64_t), int levels, Put put, Get get) {
  for (float d : {-0.5f, 0.25f}) {
    Block b;
    std::memset(&b, 0, sizeof b);
    b.d = fp32_to_fp16(d);
    b.dmin = fp32_to_fp16(-d / 2);
    write_codes(kExtremeCodes, b.scales);
    const Codes back = read_codes(b.scales);
    ASSERT_EQ(std::memcmp(&back, &kExtremeCodes, sizeof(Codes)), 0);
    int q[256];
    for (int e = 0; e < 256; ++e) {
      q[e] = (e * 7 + 3) % levels;
      put(b, e, q[e]);
    }
    float y[256];
    dequantize(&b, y, 256);
    for (int e = 0; e < 256; ++e) {
      ASSERT_EQ(get(b, e), q[e]);
      const int j = e / 32;
      // Exact in float: d and dmin are powers of two, the codes 6 bits, q at most 5.
      ASSERT_EQ(y[e], d * float(kExtremeCodes.sc[j]) * float(q[e]) + d / 2 * float(kExtremeCodes.m[j]))
          << "d=" << d << " e=" << e;
    }
  }
}

// The all-at-once decoding of the codes (the x86 kernels') against this file's, byte by byte,
// over random fields and every code at each place.
TEST(KQuantCodes, AllAtOnceEqualsOneByOne) {
  std::mt19937 rng(5);
  for (int rep = 0; rep < 20000; ++rep) {
    uint8_t s[12];
    for (uint8_t& v : s) v = uint8_t(rng());
    if (rep < 64 * 8) {  // code rep / 8 as scale and min of sub-block rep % 8, the rest random
      Codes c = read_codes(s);
      c.sc[rep % 8] = c.m[rep % 8] = rep / 8;
      write_codes(c, s);
    }
    uint8_t out[16];
    k4_scales_mins(s, out);
    const Codes want = read_codes(s);
    for (int j = 0; j < 8; ++j) {
      ASSERT_EQ(out[j], want.sc[j]) << "rep " << rep << " j " << j;
      ASSERT_EQ(out[8 + j], want.m[j]) << "rep " << rep << " j " << j;
    }
  }
}

void put_nibble(uint8_t* qs, int e, int v) {
  qs[32 * (e / 64) + e % 32] |= uint8_t(e % 64 < 32 ? v : v << 4);
}

TEST(QuantizeQ4_K, HandPackedBlocksDequantise) {
  check_hand_packed<block_q4_K>(
      dequantize_row_q4_K, 16, [](block_q4_K& b, int e, int v) { put_nibble(b.qs, e, v); },
      [](const block_q4_K& b, int e) { return q4k_value(b.qs, e); });
}

TEST(QuantizeQ5_K, HandPackedBlocksDequantise) {
  check_hand_packed<block_q5_K>(
      dequantize_row_q5_K, 32,
      [](block_q5_K& b, int e, int v) {
        put_nibble(b.qs, e, v % 16);
        b.qh[e % 32] |= uint8_t((v / 16) << (2 * (e / 64) + (e % 64 < 32 ? 0 : 1)));
      },
      q5k_value);
}

// ---- the quantisers ---------------------------------------------------------------------------

// Rows of exact floats (no libm, so every platform quantises the same values): multiples of 2^-14
// in [-1000, 1000] * 2^-14, every fifth sub-block shifted to all positive values (min 0).
std::vector<float> lcg_row(int64_t n, uint32_t seed) {
  std::vector<float> x(static_cast<size_t>(n));
  uint32_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    x[size_t(i)] = float(int((s >> 8) % 2001u) - 1000) / 16384.0f;
    if ((i / 32) % 5 == 3) x[size_t(i)] += 0.0625f;
  }
  return x;
}

uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

// The hashes of llama.cpp's own quantize_row_q4_K_ref / quantize_row_q5_K_ref on the same row
// (libggml-base.so of node-llama-cpp 3.22.1, the library tests/llamacpp runs; checked on 3000
// further rows of normal, one-signed, mixed-magnitude, sparse, constant, tiny and huge values).
TEST(QuantizeQ4_K, BytesAreLlamaCpps) {
  const int64_t n = 256 * 16;
  const std::vector<float> x = lcg_row(n, 12345);
  std::vector<block_q4_K> q4(size_t(n / 256));
  quantize_row_q4_K_ref(x.data(), q4.data(), n);
  EXPECT_EQ(fnv1a(q4.data(), q4.size() * sizeof(block_q4_K)), 0xa7f04eecea5df94bull);
  std::vector<block_q5_K> q5(size_t(n / 256));
  quantize_row_q5_K_ref(x.data(), q5.data(), n);
  EXPECT_EQ(fnv1a(q5.data(), q5.size() * sizeof(block_q5_K)), 0x1dbba1c041cf417bull);
}

// Eight sub-blocks of the kinds that take each branch of the fits: normal values of many scales,
// one-signed (min 0; all negative), sparse, constant (flat), all zero, below ggml's epsilon,
// huge, and ties of magnitude; one kind per lane, mixed so that lanes take different branches.
std::vector<float> fit_lanes(std::mt19937& rng, int n) {
  std::vector<float> x(size_t(8 * n));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> kind_of(0, 9);
  for (int j = 0; j < 8; ++j) {
    const int kind = kind_of(rng);
    const float scale = std::ldexp(1.0f, std::uniform_int_distribution<int>(-20, 20)(rng));
    for (int i = 0; i < n; ++i) {
      float v = normal(rng) * scale;
      switch (kind) {
        case 1: v = std::fabs(v); break;
        case 2: v = -std::fabs(v); break;
        case 3: v = i % 5 == 0 ? v : 0.0f; break;
        case 4: v = scale; break;
        case 5: v = 0.0f; break;
        case 6: v *= 1e-18f; break;
        case 7: v *= 1e15f; break;
        case 8: v = (i % 2 ? 1.0f : -1.0f) * scale; break;
        default: break;
      }
      x[size_t(j * n + i)] = v;
    }
  }
  return x;
}

TEST(QuantFits, EightAtOnceAreTheReferenceBitForBit) {
  std::mt19937 rng(20261207);
  struct Params { int n, nmax; float rmin; int nstep; bool mad; };
  for (const Params p : {Params{32, 15, -1.0f, 20, false}, Params{32, 31, -0.5f, 15, false}, Params{16, 3, -0.5f, 15, true}}) {
    SCOPED_TRACE(p.nmax);
    for (int round = 0; round < 1500; ++round) {
      const std::vector<float> x = fit_lanes(rng, p.n);
      std::vector<float> w(x.size());
      for (size_t i = 0; i < x.size(); ++i) w[i] = std::fabs(x[i]) + (p.mad ? 0.0f : 0.25f);
      std::vector<uint8_t> lanes(x.size()), one(x.size());
      Fit fits[8];
      fit_with_offset_x8(x.data(), w.data(), lanes.data(), fits, p.n, p.nmax, p.rmin, 0.1f, p.nstep, p.mad);
      for (int j = 0; j < 8; ++j) {
        const Fit f = fit_with_offset(x.data() + j * p.n, w.data() + j * p.n, one.data() + j * p.n, p.n, p.nmax,
                                      p.rmin, 0.1f, p.nstep, p.mad);
        ASSERT_EQ(std::bit_cast<uint32_t>(f.scale), std::bit_cast<uint32_t>(fits[j].scale)) << "round " << round << " lane " << j;
        ASSERT_EQ(std::bit_cast<uint32_t>(f.min), std::bit_cast<uint32_t>(fits[j].min)) << "round " << round << " lane " << j;
      }
      ASSERT_EQ(lanes, one) << "round " << round;
    }
  }
  for (int round = 0; round < 3000; ++round) {
    const std::vector<float> x = fit_lanes(rng, 16);
    std::vector<int8_t> lanes(x.size()), one(x.size());
    float scales[8];
    make_qx_quants_x8(16, 32, x.data(), lanes.data(), scales);
    for (int j = 0; j < 8; ++j)
      ASSERT_EQ(std::bit_cast<uint32_t>(make_qx_quants(16, 32, x.data() + 16 * j, one.data() + 16 * j)),
                std::bit_cast<uint32_t>(scales[j])) << "round " << round << " lane " << j;
    ASSERT_EQ(lanes, one) << "round " << round;
  }
}

TEST(QuantizeQ4_K, ZeroRowIsAllZeroBytes) {
  const std::vector<float> x(512, 0.0f);
  block_q4_K b4[2];
  block_q5_K b5[2];
  std::memset(b4, 0xAB, sizeof b4);
  std::memset(b5, 0xAB, sizeof b5);
  quantize_row_q4_K_ref(x.data(), b4, 512);
  quantize_row_q5_K_ref(x.data(), b5, 512);
  const std::vector<uint8_t> zeros(sizeof b5, 0);
  EXPECT_EQ(std::memcmp(b4, zeros.data(), sizeof b4), 0);
  EXPECT_EQ(std::memcmp(b5, zeros.data(), sizeof b5), 0);
}

// Dequantised values within half a step of the input (d * scale) plus the rounding of the two fp16
// super-block scales (the 6-bit min is part of the offset), and a small relative RMS error (Q4_K:
// 7.2% on Gaussian values, Q5_K 3.6%, Q4_0 8.6%).
template <class Block>
void check_round_trip(GgmlType type, int nmax, double max_rms) {
  const int64_t n = 256 * 32;
  const std::vector<float> x = random_row(n, 31);
  std::vector<Block> q(size_t(n / 256));
  std::vector<float> y(static_cast<size_t>(n));
  quantize_row(type, x.data(), q.data(), n);
  dequantize_row(type, q.data(), y.data(), n);
  double err2 = 0.0, x2 = 0.0;
  int clamped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Block& b = q[size_t(i / 256)];
    const int j = int(i % 256) / 32;
    const Codes c = read_codes(b.scales);
    const double step = double(fp16_to_fp32(b.d)) * c.sc[j];
    const double offset = double(fp16_to_fp32(b.dmin)) * c.m[j];
    const double err = std::fabs(double(y[i]) - x[i]);
    const double fp = 4 * kU * (std::fabs(x[i]) + offset + std::fabs(y[i]));
    // A value beyond the grid's ends (the fitted offset and scale may leave a few outside) is clamped.
    const bool outside = x[i] < -offset - step / 2 || x[i] > step * nmax - offset + step / 2;
    clamped += outside;
    if (!outside) {
      ASSERT_LE(err, 0.5 * step + fp) << ggml_type_name(type) << " element " << i;
    }
    err2 += err * err;
    x2 += double(x[i]) * x[i];
  }
  EXPECT_LT(clamped, n / 100) << ggml_type_name(type);
  EXPECT_LT(std::sqrt(err2 / x2), max_rms) << ggml_type_name(type);
}

TEST(QuantizeQ4_K, RoundTripError) { check_round_trip<block_q4_K>(GgmlType::Q4_K, 15, 0.085); }
TEST(QuantizeQ5_K, RoundTripError) { check_round_trip<block_q5_K>(GgmlType::Q5_K, 31, 0.045); }

// ---- the scalar dot product -------------------------------------------------------------------

// The recipe for a type with a min term (kernels.h): per 32-element block (sub-block j of
// super-block b / 8) lane k gets fma((d_w * d_x) * sc_j, sum of its four q * x.q); after the
// super-block's eight blocks, lane j gets fma(-(dmin * d_x of block j), m_j * (sum of block j's
// x.q)); then reduce8.
template <class Block, class Quant>
float recipe_min_dot(int64_t n, const Block* w, const block_q8_0* x, Quant quant) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t b = 0; b < n / 32; ++b) {
    const Block& wb = w[b / 8];
    const int j = int(b % 8);
    const Codes c = read_codes(wb.scales);
    const float dx = fp16_to_fp32(x[b].d);
    for (int k = 0; k < 8; ++k) {
      int32_t p = 0;
      for (int i = 4 * k; i < 4 * k + 4; ++i) p += quant(wb, 32 * j + i) * x[b].qs[i];
      acc[k] = std::fma((fp16_to_fp32(wb.d) * dx) * float(c.sc[j]), float(p), acc[k]);
    }
    if (j < 7) continue;
    for (int64_t m = b - 7; m <= b; ++m) {
      int32_t xsum = 0;
      for (int i = 0; i < 32; ++i) xsum += x[m].qs[i];
      acc[m % 8] = std::fma(-(fp16_to_fp32(wb.dmin) * fp16_to_fp32(x[m].d)), float(c.m[m % 8] * xsum), acc[m % 8]);
    }
  }
  return recipe_reduce8(acc);
}

// The bound against the dequantised rows: each dequantised value (d * sc) * q - dmin * m carries
// three roundings of its two terms' size, the kernel two (the scale products) plus the
// accumulation, whose lanes take one fma per block and one per super-block.
template <class Block, class Quant>
double min_dot_bound(int64_t n, const Block* w, const block_q8_0* x, Quant quant) {
  double terms = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const Block& wb = w[i / 256];
    const int j = int(i % 256) / 32;
    const Codes c = read_codes(wb.scales);
    const double xv = double(fp16_to_fp32(x[i / 32].d)) * x[i / 32].qs[i % 32];
    terms += (std::fabs(double(fp16_to_fp32(wb.d)) * c.sc[j] * quant(wb, int(i % 256))) +
              std::fabs(double(fp16_to_fp32(wb.dmin)) * c.m[j])) * std::fabs(xv);
  }
  return (gamma_k(n / 32 + n / 256 + 3) + 6 * kU) * terms;
}

template <class Block, class Quant>
void check_min_dot(GgmlType type, Quant quant, uint32_t seed) {
  const TypeKernels& k = kernels_scalar().types[kernel_type_index(type)];
  std::mt19937 rng(seed);
  for (int64_t n : {256, 512, 9 * 256}) {
    for (int rep = 0; rep < 4; ++rep) {
      // Quantised rows, and raw ones (random codes, quants and small fp16 scales of either sign).
      std::vector<Block> w(size_t(n / 256));
      if (rep % 2 == 0) {
        quantize_row(type, random_row(n, seed + uint32_t(rep), 0.2f).data(), w.data(), n);
      } else {
        for (Block& b : w) {
          for (size_t i = 0; i < sizeof b; ++i) reinterpret_cast<uint8_t*>(&b)[i] = uint8_t(rng());
          b.d = small_half(rng);
          b.dmin = small_half(rng);
        }
      }
      const std::vector<block_q8_0> x = quantize_q8_0(random_row(n, seed + 7 + uint32_t(rep), 3.0f));
      const float got = k.vec_dot(n, w.data(), x.data());
      const float want = recipe_min_dot(n, w.data(), x.data(), quant);
      EXPECT_TRUE(same_bits(got, want)) << ggml_type_name(type) << " n=" << n << " got " << got << " want " << want;
      const Reference ref = reference_dot(dequant(type, w.data(), n), dequant(GgmlType::Q8_0, x.data(), n));
      EXPECT_LE(std::fabs(got - ref.value), min_dot_bound(n, w.data(), x.data(), quant))
          << ggml_type_name(type) << " n=" << n;
    }
  }
}

TEST(KernelsScalar, DotQ4_K) {
  check_min_dot<block_q4_K>(GgmlType::Q4_K, [](const block_q4_K& b, int e) { return q4k_value(b.qs, e); }, 40);
}

TEST(KernelsScalar, DotQ5_K) { check_min_dot<block_q5_K>(GgmlType::Q5_K, q5k_value, 50); }


// ---- Q2_K and Q3_K ---------------------------------------------------------------------------
// Q2_K and Q3_K (16 sub-blocks of 16): hand-packed blocks through the dequantisers (every scale and
// min nibble, every Q3_K scale code from 0 to 63 in both of its fields, every high bit), the
// quantisers' round trip, and the scalar dot products against kernels.h's recipe written out again
// here. The layouts are read from KQUANT_FACTS.md's descriptions, not from src/ggml/q23_K_layout.h.
// (Their bytes against ggml's own: tests/llamacpp/ggml_quantizers.cpp.)
namespace low_bit {

// Element e of a super-block: half h = e / 128, j = (e % 128) / 32, l = e % 32 reads bits 2j of
// qs[32h + l]; its sub-block is e / 16; Q3_K's high bit is bit 4h + j of hmask[l].
int low_bits(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
int high_bit(const uint8_t* hmask, int e) { return (hmask[e % 32] >> (4 * (e / 128) + (e % 128) / 32)) & 1; }
// Q3_K sub-block s's 6-bit code: low 4 bits in scales[s] (s < 8) or scales[s - 8] >> 4, high 2 bits
// at bit 2 (s / 4) of scales[8 + s % 4].
int q3_code(const uint8_t* sc, int s) {
  return (s < 8 ? sc[s] % 16 : sc[s - 8] / 16) + 16 * ((sc[8 + s % 4] >> (2 * (s / 4))) & 3);
}
void set_q3_code(uint8_t* sc, int s, int code) {
  if (s < 8) sc[s] = uint8_t(sc[s] + code % 16);
  else sc[s - 8] = uint8_t(sc[s - 8] + 16 * (code % 16));
  sc[8 + s % 4] = uint8_t(sc[8 + s % 4] + ((code / 16) << (2 * (s / 4))));
}

using test::dequantized;

TEST(LowBitKQuants, Q2_KIsScaleTimesQuantMinusMinPerSixteen) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 4; ++trial) {
    block_q2_K b{};
    b.d = fp32_to_fp16(trial % 2 ? -0.25f : 1.5f);
    b.dmin = fp32_to_fp16(trial < 2 ? 0.75f : -2.0f);
    for (int s = 0; s < 16; ++s) b.scales[s] = uint8_t(trial == 0 ? (s | (15 - s) << 4) : rng());
    for (uint8_t& q : b.qs) q = uint8_t(rng());
    const std::vector<float> y = dequantized(GgmlType::Q2_K, &b, 256);
    for (int e = 0; e < 256; ++e) {
      const int s = e / 16;
      const float want = fp16_to_fp32(b.d) * float(b.scales[s] % 16) * float(low_bits(b.qs, e)) -
                         fp16_to_fp32(b.dmin) * float(b.scales[s] / 16);
      EXPECT_EQ(y[size_t(e)], want) << trial << " element " << e;
    }
  }
}

TEST(LowBitKQuants, Q3_KScaleCodesAndHighBits) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 4; ++trial) {
    block_q3_K b{};
    b.d = fp32_to_fp16(trial % 2 ? -0.5f : 0.125f);
    for (int s = 0; s < 16; ++s) set_q3_code(b.scales, s, trial == 0 ? 4 * s + 3 : trial == 1 ? (s % 2 ? 63 : 0) : int(rng() % 64));
    for (int s = 0; s < 16; ++s) ASSERT_EQ(q3_code(b.scales, s), trial == 0 ? 4 * s + 3 : q3_code(b.scales, s));
    for (uint8_t& q : b.qs) q = uint8_t(rng());
    for (uint8_t& h : b.hmask) h = uint8_t(trial == 3 ? 0 : rng());
    const std::vector<float> y = dequantized(GgmlType::Q3_K, &b, 256);
    for (int e = 0; e < 256; ++e) {
      const int q = low_bits(b.qs, e) - (high_bit(b.hmask, e) ? 0 : 4);
      EXPECT_EQ(y[size_t(e)], fp16_to_fp32(b.d) * float(q3_code(b.scales, e / 16) - 32) * float(q))
          << trial << " element " << e;
    }
  }
}

TEST(LowBitKQuants, QuantisersRoundTripNearTheRow) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1024);
  for (float& v : x) v = normal(rng);
  for (auto [type, bound] : {std::pair{GgmlType::Q2_K, 0.45}, {GgmlType::Q3_K, 0.25}}) {
    std::vector<uint8_t> q(ggml_row_bytes(type, 1024));
    ggml_traits(type).quantize(x.data(), q.data(), 1024);
    const std::vector<float> y = dequantized(type, q.data(), 1024);
    double err = 0, norm = 0;
    for (size_t i = 0; i < x.size(); ++i) err += (y[i] - x[i]) * (y[i] - x[i]), norm += x[i] * x[i];
    EXPECT_LT(std::sqrt(err / norm), bound) << ggml_type_name(type) << ": relative RMS error";
    EXPECT_GT(std::sqrt(err / norm), 0.01) << ggml_type_name(type);
  }
  std::vector<float> zeros(256, 0.0f), back;
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K}) {
    std::vector<uint8_t> q(ggml_row_bytes(type, 256));
    ggml_traits(type).quantize(zeros.data(), q.data(), 256);
    back = dequantized(type, q.data(), 256);
    for (float v : back) EXPECT_EQ(v, 0.0f) << ggml_type_name(type);
  }
}

// Q3_K: per 32-element block k, lane j's integer sum times (code - 32) of its sub-block, then
// fma(d * x.d, p). Q2_K: the same with the 4-bit scale, then lane k takes -(dmin * x_k.d) times
// (min_2k * sum of x_k's first 16 quants + min_2k+1 * sum of its last 16).
TEST(LowBitKQuants, ScalarDotProductsFollowTheRecipe) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 512;
  std::vector<float> xf(static_cast<size_t>(n)), wf(static_cast<size_t>(n));
  for (float& v : xf) v = normal(rng);
  for (float& v : wf) v = normal(rng);
  std::vector<block_q8_0> x(size_t(n / 32));
  quantize_row_q8_0_ref(xf.data(), x.data(), n);
  auto reduce8 = [](const float* a) { return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])); };
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K}) {
    std::vector<uint8_t> w(ggml_row_bytes(type, n));
    ggml_traits(type).quantize(wf.data(), w.data(), n);
    float acc[8] = {};
    for (int64_t sb = 0; sb < n / 256; ++sb) {
      const uint8_t* blk = w.data() + size_t(sb) * ggml_block_bytes(type);
      const block_q8_0* xs = x.data() + sb * 8;
      for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 8; ++j) {
          int32_t p = 0;
          int scale = 0;
          for (int i = 4 * j; i < 4 * j + 4; ++i) {
            const int e = 32 * k + i;
            int q;
            if (type == GgmlType::Q2_K) {
              q = low_bits(blk + 16, e);
              scale = blk[e / 16] % 16;
            } else {
              q = low_bits(blk + 32, e) - (high_bit(blk, e) ? 0 : 4);
              scale = q3_code(blk + 96, e / 16) - 32;
            }
            p += q * xs[k].qs[i];
          }
          uint16_t d;
          std::memcpy(&d, blk + (type == GgmlType::Q2_K ? 80 : 108), 2);
          acc[j] = std::fma(fp16_to_fp32(d) * fp16_to_fp32(xs[k].d), float(p * scale), acc[j]);
        }
      if (type == GgmlType::Q2_K) {
        uint16_t dmin;
        std::memcpy(&dmin, blk + 82, 2);
        for (int k = 0; k < 8; ++k) {
          int32_t lo = 0, hi = 0;
          for (int i = 0; i < 16; ++i) lo += xs[k].qs[i], hi += xs[k].qs[16 + i];
          const int32_t m = (blk[2 * k] / 16) * lo + (blk[2 * k + 1] / 16) * hi;
          acc[k] = std::fma(-(fp16_to_fp32(dmin) * fp16_to_fp32(xs[k].d)), float(m), acc[k]);
        }
      }
    }
    test::expect_scalar_dot(type, n, w.data(), x, reduce8(acc));
  }
}

}  // namespace low_bit

}  // namespace
}  // namespace r1pi
