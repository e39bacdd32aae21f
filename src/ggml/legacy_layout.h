// Where ggml keeps the quants of its 32-element types beside Q4_0 (Q4_1, Q5_0, Q5_1, IQ4_NL) and
// of IQ4_XS: element j < 16 is the low nibble of qs[j], element 16 + j its high nibble; Q5_0 and
// Q5_1 add bit j of qh (little-endian u32) as the fifth bit of element j. IQ4_XS's sub-block b
// has its quants in qs[16b ..] and a 6-bit scale in scales_l / scales_h.
// Shared by the quantisers, the dequantisers and the scalar dot products.
#pragma once
#include <cstdint>
#include <cstring>

#include "ggml/quant_blocks.h"

namespace r1pi {

// The 32 nibbles of qs (0..15), in element order.
inline void unpack_nibbles(const uint8_t* qs, uint8_t* q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + 16] = qs[j] >> 4;
  }
}

// The 32 five-bit values (0..31) of a Q5_0 / Q5_1 block.
inline void unpack_5bit(const uint8_t* qh_bytes, const uint8_t* qs, uint8_t* q) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof qh);
  unpack_nibbles(qs, q);
  for (int j = 0; j < 32; ++j) q[j] = uint8_t(q[j] | (((qh >> j) & 1) << 4));
}

// IQ4_XS sub-block b's scale, 0..63 (the weight's factor is scale - 32).
inline int iq4_xs_scale(const block_iq4_xs& x, int b) {
  return ((x.scales_l[b / 2] >> (4 * (b % 2))) & 0xF) | (((x.scales_h >> (2 * b)) & 3) << 4);
}

}  // namespace r1pi
