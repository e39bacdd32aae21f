// The inputs of the backend kernel tests (test_kernels_backends.cpp): activation rows that
// exercise the Q8_0 quantiser, and weight rows of every type with kernels, from the type's own
// quantiser (ggml_traits) and, where the tests know the type's blocks, raw ones that no quantiser
// writes (kTypeExtras).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/bf16.h"
#include "ggml/fp16.h"
#include "ggml/ggml_type.h"
#include "ggml/quant_blocks.h"
#include "neon/kernels.h"
#include "test_support.h"

namespace r1pi::test {

// Activation rows that exercise the Q8_0 quantiser: blocks of every kind in turn.
//   kind 0: normal values        1: all zeros (and -0)       2: all equal
//   3: ties (x * id = k + 0.5 exactly)    4: tiny (1e-30, subnormal d: all quants 0)
//   5: subnormal floats          6: huge (1e30: d overflows fp16 to inf)   7: mixed magnitudes
inline std::vector<float> activation_row(int64_t n, std::mt19937& rng, bool extreme) {
  std::vector<float> x = normal_row(n, rng);
  std::uniform_int_distribution<int> kind_of(0, 7), tie(-127, 126);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (int64_t b = 0; b < n / 32; ++b) {
    float* xb = x.data() + b * 32;
    int kind = kind_of(rng);
    if (!extreme && (kind == 4 || kind == 6)) kind = 0;
    switch (kind) {
      case 1:
        for (int i = 0; i < 32; ++i) xb[i] = (i % 3 == 0) ? -0.0f : 0.0f;
        break;
      case 2:
        for (int i = 0; i < 32; ++i) xb[i] = -1.75f;
        break;
      case 3:
        // amax = 15.875 = 127 / 8: d = 0.125 and id = 8 exactly, so (k + 0.5) / 8 is a tie.
        for (int i = 0; i < 32; ++i) xb[i] = (float(tie(rng)) + 0.5f) / 8.0f;
        xb[int(rng() % 32)] = (rng() & 1) ? 15.875f : -15.875f;
        break;
      case 4:
        for (int i = 0; i < 32; ++i) xb[i] *= 1e-30f;
        break;
      case 5:
        for (int i = 0; i < 32; ++i) xb[i] = uni(rng) * 1e-39f;
        break;
      case 6:
        for (int i = 0; i < 32; ++i) xb[i] *= 1e30f;
        break;
      case 7:
        for (int i = 0; i < 32; ++i) xb[i] *= std::ldexp(1.0f, int(rng() % 40) - 20);
        break;
      default:
        break;
    }
  }
  return x;
}

// Realistic fp16 scale (what a quantiser writes).
inline uint16_t small_half(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(1e-4f, 0.05f);
  return fp32_to_fp16((rng() & 1) ? u(rng) : -u(rng));
}

inline size_t row_bytes(GgmlType t, int64_t n) { return ggml_row_bytes(t, uint64_t(n)); }

inline bool quantised(GgmlType t) { return activation_type(t) == GgmlType::Q8_0; }

inline int64_t block_elements(GgmlType t) { return int64_t(ggml_traits(t).block_elements); }

// n rounded up to whole blocks of t.
inline int64_t whole_blocks(GgmlType t, int64_t n) {
  const int64_t b = block_elements(t);
  return (n + b - 1) / b * b;
}

// ---- per-type extras: rows a quantiser never writes --------------------------------------------

// A row of n random weights as a file may hold them: random quants and fp16 scales (infinite
// ones too when allow_inf).
inline void raw_q4_0(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf) {
  auto* blk = reinterpret_cast<block_q4_0*>(row);
  for (int64_t b = 0; b < n / 32; ++b) {
    blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
    for (uint8_t& q : blk[b].qs) q = uint8_t(rng());
  }
}

inline void raw_q8_0(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf) {
  auto* blk = reinterpret_cast<block_q8_0*>(row);
  for (int64_t b = 0; b < n / 32; ++b) {
    blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
    for (int8_t& q : blk[b].qs) q = int8_t(rng());  // -128 included
    if (b % 5 == 0) blk[b].qs[rng() % 32] = -128;
  }
}

inline void raw_q6_K(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf) {
  auto* blk = reinterpret_cast<block_q6_K*>(row);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (uint8_t& q : blk[b].ql) q = uint8_t(rng());
    for (uint8_t& q : blk[b].qh) q = uint8_t(rng());
    for (int8_t& s : blk[b].scales) s = int8_t(rng());  // -128 .. 127
    blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
  }
}

// Q4_K, Q5_K: random codes and quants, both fp16 super-block scales random (d and dmin of either
// sign).
template <class Block>
inline void raw_min_block(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf) {
  auto* blk = reinterpret_cast<Block*>(row);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (size_t i = 0; i < sizeof(Block); ++i) reinterpret_cast<uint8_t*>(&blk[b])[i] = uint8_t(rng());
    blk[b].d = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
    blk[b].dmin = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
  }
}

// Q4_1, Q5_1, IQ4_XS, Q2_K, Q3_K: random bytes (quants, scale codes, mins, Q3_K's high-bit mask)
// with each block's fp16 scale D random, and its fp16 M (the mins' scale, or Q4_1's m) where given.
template <class Block, int64_t E, uint16_t Block::*D, uint16_t Block::*M = nullptr>
inline void raw_blocks(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf) {
  auto* blk = reinterpret_cast<Block*>(row);
  for (int64_t b = 0; b < n / E; ++b) {
    for (size_t i = 0; i < sizeof(Block); ++i) reinterpret_cast<uint8_t*>(&blk[b])[i] = uint8_t(rng());
    blk[b].*D = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
    if constexpr (M != nullptr) blk[b].*M = (rng() % 4 == 0) ? random_half(rng, allow_inf) : small_half(rng);
  }
}

// BF16: every third weight a random finite bit pattern (subnormals included; as raw_f16, no NaN,
// whose payloads need not survive), the others realistic.
inline void raw_bf16(uint8_t* row, int64_t n, std::mt19937& rng, bool) {
  auto* h = reinterpret_cast<uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) {
    h[i] = fp32_to_bf16(fp16_to_fp32(small_half(rng)));
    if (i % 3 == 0)
      do h[i] = uint16_t(rng());
      while ((h[i] & 0x7F80) == 0x7F80);
  }
}

inline void raw_f16(uint8_t* row, int64_t n, std::mt19937& rng, bool) {
  auto* h = reinterpret_cast<uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) h[i] = (i % 3 == 0) ? random_half(rng) : small_half(rng);
}

inline void raw_f32(uint8_t* row, int64_t n, std::mt19937& rng, bool) {
  std::vector<float> v = normal_row(n, rng);
  for (int64_t i = 0; i < n; i += 7) v[size_t(i)] = (i % 2) ? -0.0f : 0.0f;
  for (int64_t i = 1; i < n; i += 11) v[size_t(i)] *= 1e-38f;
  std::memcpy(row, v.data(), size_t(n) * sizeof(float));
}

// The extras the tests know for a type: its raw rows, and where its blocks keep their fp16
// scale and, for a type with a min term, the fp16 scale of the mins (QuantDotsWithEveryFp16Scale). A type without a row here is still tested everywhere, on
// its quantiser's rows of normal and of extreme values (weight_rows).
struct TypeExtras {
  GgmlType type;
  void (*raw_row)(uint8_t* row, int64_t n, std::mt19937& rng, bool allow_inf);
  size_t scale_offset;  // SIZE_MAX: none
  size_t min_offset = SIZE_MAX;
};
inline const TypeExtras kTypeExtras[] = {
    {GgmlType::F32, raw_f32, SIZE_MAX},
    {GgmlType::F16, raw_f16, SIZE_MAX},
    {GgmlType::Q4_0, raw_q4_0, offsetof(block_q4_0, d)},
    {GgmlType::Q8_0, raw_q8_0, offsetof(block_q8_0, d)},
    {GgmlType::Q6_K, raw_q6_K, offsetof(block_q6_K, d)},
    {GgmlType::Q4_K, raw_min_block<block_q4_K>, offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)},
    {GgmlType::Q5_K, raw_min_block<block_q5_K>, offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)},
    {GgmlType::Q4_1, raw_blocks<block_q4_1, 32, &block_q4_1::d, &block_q4_1::m>, offsetof(block_q4_1, d),
     offsetof(block_q4_1, m)},
    {GgmlType::Q5_1, raw_blocks<block_q5_1, 32, &block_q5_1::d, &block_q5_1::m>, offsetof(block_q5_1, d),
     offsetof(block_q5_1, m)},
    {GgmlType::IQ4_XS, raw_blocks<block_iq4_xs, 256, &block_iq4_xs::d>, offsetof(block_iq4_xs, d)},
    {GgmlType::Q2_K, raw_blocks<block_q2_K, 256, &block_q2_K::d, &block_q2_K::dmin>, offsetof(block_q2_K, d),
     offsetof(block_q2_K, dmin)},
    {GgmlType::Q3_K, raw_blocks<block_q3_K, 256, &block_q3_K::d>, offsetof(block_q3_K, d)},
    {GgmlType::BF16, raw_bf16, SIZE_MAX},
};

inline const TypeExtras* extras(GgmlType t) {
  for (const TypeExtras& e : kTypeExtras)
    if (e.type == t) return &e;
  return nullptr;
}

// `rows` weight rows of n elements: odd rows normal values through the type's quantiser
// (ggml_traits(t).quantize), even rows its raw rows (kTypeExtras), or for a type without them the
// quantiser's bytes for extreme values (activation_row: zeros, ties, subnormal, mixed magnitudes).
inline std::vector<uint8_t> weight_rows(GgmlType t, int64_t n, int64_t rows, std::mt19937& rng,
                                 bool allow_inf = false) {
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> w(rb * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = w.data() + rb * size_t(r);
    const TypeExtras* e = extras(t);
    if (r % 2 == 0 && e) {
      e->raw_row(row, n, rng, allow_inf);
    } else {
      const std::vector<float> v = r % 2 ? normal_row(n, rng, 0.02f) : activation_row(n, rng, false);
      ggml_traits(t).quantize(v.data(), row, n);
    }
  }
  return w;
}

// The activations as the matrix product takes them: Q8_0 rows (quantised by the scalar reference)
// for quantised weights, floats otherwise.
struct Activations {
  std::vector<uint8_t> data;
  size_t row_bytes = 0;
};

inline Activations activations(GgmlType t, int64_t n, int B, std::mt19937& rng, bool extreme) {
  Activations a;
  a.row_bytes = quantised(t) ? size_t(n / 32) * sizeof(block_q8_0) : size_t(n) * sizeof(float);
  a.data.resize(a.row_bytes * size_t(B));
  for (int b = 0; b < B; ++b) {
    std::vector<float> x = activation_row(n, rng, extreme);
    if (!quantised(t)) {
      // Float activations: no block structure needed; keep the extremes finite.
      for (float& v : x)
        if (!std::isfinite(v * 1.0f)) v = 0.0f;
      std::memcpy(a.data.data() + a.row_bytes * size_t(b), x.data(), a.row_bytes);
    } else {
      kernels_scalar().quantize_row_q8_0(x.data(),
                            reinterpret_cast<block_q8_0*>(a.data.data() + a.row_bytes * size_t(b)), n);
    }
  }
  return a;
}

}  // namespace r1pi::test
