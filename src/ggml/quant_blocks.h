// ggml's block layouts, byte for byte (the GGUF files store these structs back to back).
#pragma once
#include <cstdint>

namespace r1pi {

constexpr int QK4_0 = 32;
constexpr int QK8_0 = 32;
constexpr int QK_K = 256;

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

}  // namespace r1pi
