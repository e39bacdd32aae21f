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
#include <cstring>

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

// All eight scales (out[0..7]) and mins (out[8..15]) at once, as k4_scale_min gives them, four
// sub-blocks per 32-bit word (the x86 decode kernels take them once per super-block).
inline void k4_scales_mins(const uint8_t* scales, uint8_t* out) {
  uint32_t w[3];
  std::memcpy(w, scales, 12);
  const uint32_t low6 = 0x3F3F3F3Fu, low4 = 0x0F0F0F0Fu, top2 = 0x03030303u;
  const uint32_t o[4] = {w[0] & low6, (w[2] & low4) | (((w[0] >> 6) & top2) << 4), w[1] & low6,
                         ((w[2] >> 4) & low4) | (((w[1] >> 6) & top2) << 4)};
  std::memcpy(out, o, 16);
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
