// Where ggml keeps each 6-bit value of a Q6_K block. Element e (0..255) lives in half h = e / 128;
// within it, g = (e % 128) / 32 picks the quarter and l = e % 32 the lane:
//   low 4 bits:  ql[64h + l + 32 * (g & 1)], low nibble for g < 2, high nibble otherwise
//   high 2 bits: qh[32h + l] >> (2g)
// and its scale is scales[e / 16]. Shared by the dequantiser and the scalar dot product.
#pragma once
#include <cstdint>

#include "ggml/quant_blocks.h"

namespace r1pi {

// The block's 256 values as signed integers q - 32 (-32..31), in element order.
inline void unpack_q6_K(const block_q6_K& block, int8_t* q) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = block.ql + 64 * h;
    const uint8_t* qh = block.qh + 32 * h;
    int8_t* out = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      out[l + 0] = int8_t(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
      out[l + 32] = int8_t(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
      out[l + 64] = int8_t(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      out[l + 96] = int8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
}

}  // namespace r1pi
