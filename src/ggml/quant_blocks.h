// ggml's block layouts, byte for byte (the GGUF files store these structs back to back).
#pragma once
#include <cstdint>

namespace r1pi {

constexpr int QK4_0 = 32;
constexpr int QK8_0 = 32;
constexpr int QK_K = 256;
constexpr int K_SCALE_SIZE = 12;  // the packed 6-bit scales and mins of Q4_K and Q5_K

// Q4_0: x = d * (q - 8), q in 0..15; low nibbles hold elements 0..15, high nibbles 16..31.
struct block_q4_0 {
  uint16_t d;              // fp16 scale
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_q4_0) == 18);

// Q8_0: x = d * q, q in -127..127.
struct block_q8_0 {
  uint16_t d;              // fp16 scale
  int8_t qs[QK8_0];
};
static_assert(sizeof(block_q8_0) == 34);

// Q6_K: 256 values in 16 sub-blocks of 16, x = d * scales[j] * (q - 32), q in 0..63 split into
// 4 low bits (ql) and 2 high bits (qh), as ggml packs them.
struct block_q6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;              // fp16 super-block scale
};
static_assert(sizeof(block_q6_K) == 210);

// Q4_K: 256 values in 8 sub-blocks of 32, x = d * sc[j] * q - dmin * m[j], q in 0..15; the
// 6-bit sc and m of each sub-block packed in scales[] (q4_K_layout.h), the quants in chunks of 64
// (qs[32c + l]: low nibble element 64c + l, high nibble element 64c + 32 + l).
struct block_q4_K {
  uint16_t d;              // fp16 super-block scale of the scales
  uint16_t dmin;           // fp16 super-block scale of the mins
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qs[QK_K / 2];
};
static_assert(sizeof(block_q4_K) == 144);

// Q5_K: Q4_K with a fifth bit per value, q in 0..31: in chunk c, element 64c + l takes bit 2c of
// qh[l], element 64c + 32 + l bit 2c + 1.
struct block_q5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};
static_assert(sizeof(block_q5_K) == 176);

}  // namespace r1pi
