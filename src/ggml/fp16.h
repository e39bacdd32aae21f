// IEEE half <-> single conversion, round-to-nearest-even, identical to the F16C instructions
// (and to ggml's portable fallback). Used for block scales and F16 tensors.
#pragma once
#include <cstdint>
#include <cstring>

namespace r1pi {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);

}  // namespace r1pi
