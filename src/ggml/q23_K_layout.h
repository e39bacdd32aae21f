// Where ggml keeps the quants and scales of Q2_K and Q3_K (16 sub-blocks of 16 elements each).
//   quants: two halves of 128 elements; half h uses qs[32h .. 32h+31]; for j = 0..3 (bits 2j, 2j+1)
//     element 128h + 32j + l (l < 32) is (qs[32h + l] >> 2j) & 3, in sub-block 8h + 2j + l / 16.
//     Q3_K: bit 4h + j of hmask[l] is its high bit; clear, it takes 4 off (values -4..3).
//   Q2_K scales: scales[s] & 15 the scale, scales[s] >> 4 the min of sub-block s.
//   Q3_K scales: sub-block s's 6-bit code has its low four bits in scales[s] (s < 8, low nibble) or
//     scales[s - 8] (high nibble), its high two bits at bit 2 (s / 4) of scales[8 + s % 4]; the
//     scale is the code - 32.
// Shared by the quantisers, the dequantisers and the scalar dot products.
#pragma once
#include <cstdint>

#include "ggml/quant_blocks.h"

namespace r1pi {

inline void unpack_q2_K(const block_q2_K& b, uint8_t* q) {
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) q[128 * h + 32 * j + l] = uint8_t((b.qs[32 * h + l] >> (2 * j)) & 3);
}

inline void unpack_q3_K(const block_q3_K& b, int8_t* q) {
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) {
        const int low = (b.qs[32 * h + l] >> (2 * j)) & 3;
        const int high = (b.hmask[l] >> (4 * h + j)) & 1;
        q[128 * h + 32 * j + l] = int8_t(low - (high ? 0 : 4));
      }
}

inline int q3_K_scale_code(const uint8_t* scales, int s) {
  const int low = s < 8 ? scales[s] & 0xF : scales[s - 8] >> 4;
  return low | (((scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4);
}

}  // namespace r1pi
