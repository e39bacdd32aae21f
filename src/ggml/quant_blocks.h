// ggml's block layouts, byte for byte (the GGUF files store these structs back to back).
#pragma once
#include <bit>
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

// Q4_1: x = d * q + m, q in 0..15, nibbles as Q4_0's.
struct block_q4_1 {
  uint16_t d;              // fp16 scale
  uint16_t m;              // fp16 minimum
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_q4_1) == 20);

// Q5_0: x = d * (q - 16), q in 0..31: the low four bits as Q4_0's nibbles, the fifth bit of
// element j bit j of qh (little-endian).
struct block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_q5_0) == 22);

// Q5_1: x = d * q + m, q in 0..31, bits as Q5_0's.
struct block_q5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_q5_1) == 24);

// IQ4_NL: x = d * kvalues_iq4nl[q], q in 0..15, nibbles as Q4_0's.
struct block_iq4_nl {
  uint16_t d;
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_iq4_nl) == 18);
// The non-linear levels of IQ4_NL and IQ4_XS.
inline constexpr int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_XS: 256 values in 8 sub-blocks of 32, x = d * (ls_b - 32) * kvalues_iq4nl[q], ls_b the
// sub-block's 6-bit scale (low four bits in scales_l, nibble b % 2 of byte b / 2; high two bits
// bits 2b, 2b+1 of scales_h); sub-block b's quants in qs[16b .. 16b+15], nibbles as Q4_0's.
struct block_iq4_xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[QK_K / 64];
  uint8_t qs[QK_K / 2];
};
static_assert(sizeof(block_iq4_xs) == 136);

// MXFP4 (OCP microscaling FP4, gpt-oss's experts): x = kvalues_mxfp4[q] * 2^(e - 128), q in 0..15,
// nibbles as Q4_0's. The levels are twice E2M1's (0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign), so
// the scale is half the E8M0 exponent's 2^(e - 127).
struct block_mxfp4 {
  uint8_t e;               // E8M0 exponent
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(block_mxfp4) == 17);
inline constexpr int8_t kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// 2^(e - 128) for every e, e = 0 and 1 the subnormals 2^-128 and 2^-127 (ggml's
// GGML_E8M0_TO_FP32_HALF; e = 255 is 2^127, not NaN).
constexpr float e8m0_to_fp32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

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

// Q2_K: 256 values in 16 sub-blocks of 16, x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4),
// q in 0..3; the quants two bits each, as q23_K_layout.h says.
struct block_q2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(block_q2_K) == 84);

// Q3_K: 256 values in 16 sub-blocks of 16, x = d * (scale_s - 32) * q, q in -4..3 (two low bits in
// qs, a high bit in hmask that, when clear, takes 4 off); sixteen 6-bit scales packed in 12 bytes
// (q23_K_layout.h).
struct block_q3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(block_q3_K) == 110);

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
