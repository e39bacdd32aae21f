// Where ggml keeps the scales, mins and quants of a Q4_K block (Q5_K shares all of it and adds
// a fifth bit per value). Sub-block j (0..7) is elements 32j .. 32j+31.
//   scale and min (6 bits each, ggml's get_scale_min_k4): for j < 4 the low 6 bits of scales[j]
//     and scales[j + 4]; for j >= 4 the low nibble of scales[j + 4] with the top 2 bits of
//     scales[j - 4] above it, and the high nibble of scales[j + 4] with the top 2 bits of scales[j].
//   quants: chunk c = j / 2 (64 elements) is qs[32c .. 32c + 31]; element 64c + l (l < 32) is the
//     low nibble of qs[32c + l], element 64c + 32 + l its high nibble. Q5_K: bit 2c (low nibble
//     element) or 2c + 1 (high nibble element) of qh[l] adds 16.
// Shared by the dequantisers and the scalar dot products.
#pragma once
#include <cstdint>

#include "ggml/quant_blocks.h"

namespace r1pi {

struct ScaleMin {
  int scale;  // 0..63
  int min;    // 0..63
};

inline ScaleMin k4_scale_min(const uint8_t* scales, int j) {
  if (j < 4) return {scales[j] & 63, scales[j + 4] & 63};
  return {(scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4),
          (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)};
}

// The block's 256 values q (0..15) in element order.
inline void unpack_q4_K(const block_q4_K& block, uint8_t* q) {
  for (int c = 0; c < QK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = uint8_t(block.qs[32 * c + l] & 0xF);
      q[64 * c + 32 + l] = uint8_t(block.qs[32 * c + l] >> 4);
    }
  }
}

// The block's 256 values q (0..31) in element order.
inline void unpack_q5_K(const block_q5_K& block, uint8_t* q) {
  for (int c = 0; c < QK_K / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int hi_lo = (block.qh[l] >> (2 * c)) & 1, hi_hi = (block.qh[l] >> (2 * c + 1)) & 1;
      q[64 * c + l] = uint8_t((block.qs[32 * c + l] & 0xF) | (hi_lo << 4));
      q[64 * c + 32 + l] = uint8_t((block.qs[32 * c + l] >> 4) | (hi_hi << 4));
    }
  }
}

}  // namespace r1pi
