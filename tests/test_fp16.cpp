// fp16 <-> fp32: exact IEEE conversion with round-to-nearest-even, checked against hand-made
// values, an exhaustive round trip, and (on x86 with F16C) the hardware instructions.
#include <gtest/gtest.h>

#include "test_support.h"

#include <cmath>
#include <cstring>
#include <random>

#include "ggml/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define R1PI_TEST_F16C 1
#endif

namespace r1pi {
namespace {

using test::bits_of;
using test::from_bits;

bool is_nan_half(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

TEST(Fp16, KnownHalves) {
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(fp16_to_fp32(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(bits_of(fp16_to_fp32(0x8000)), 0x80000000u);         // -0 keeps its sign
  EXPECT_EQ(fp16_to_fp32(0x7c00), INFINITY);
  EXPECT_EQ(fp16_to_fp32(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7e00)));
  EXPECT_EQ(bits_of(fp16_to_fp32(0x7d01)), 0x7fe02000u);  // signalling NaN comes back quiet
}

TEST(Fp16, RoundsToNearestEven) {
  const float one = 1.0f;
  const float half_ulp = std::ldexp(1.0f, -11);         // half a half-ulp at 1
  EXPECT_EQ(fp32_to_fp16(one + half_ulp), 0x3c00);      // tie -> even (down)
  EXPECT_EQ(fp32_to_fp16(one + 3 * half_ulp), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(fp32_to_fp16(std::nextafter(one + half_ulp, 2.0f)), 0x3c01);
  EXPECT_EQ(fp32_to_fp16(std::nextafter(one + half_ulp, 0.0f)), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-(one + 3 * half_ulp)), 0xbc02);
  // Overflow: 65520 is the tie between 65504 (odd mantissa) and 65536, so it goes to inf.
  EXPECT_EQ(fp32_to_fp16(65519.996f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xfc00);
  // Subnormal halves and underflow: 2^-25 ties between 0 and 2^-24 and goes to 0.
  const float tiny = std::ldexp(1.0f, -25);
  EXPECT_EQ(fp32_to_fp16(tiny), 0x0000);
  EXPECT_EQ(fp32_to_fp16(std::nextafter(tiny, 1.0f)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * tiny), 0x0002);                   // 1.5 units -> 2 (even)
  EXPECT_EQ(fp32_to_fp16(5 * tiny), 0x0002);                   // 2.5 units -> 2 (even)
  EXPECT_EQ(fp32_to_fp16(-std::ldexp(1023.5f, -24)), 0x8400);  // rounds up into the normals
  EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-1e-30f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -140)), 0x0000);  // float subnormal input
  EXPECT_EQ(fp32_to_fp16(NAN) & 0x7e00, 0x7e00);
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t half = uint16_t(h);
    const float f = fp16_to_fp32(half);
    if (is_nan_half(half)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(fp32_to_fp16(f), half | 0x200) << std::hex << h;  // quieted, payload kept
    } else {
      ASSERT_EQ(fp32_to_fp16(f), half) << std::hex << h;
    }
  }
}

#ifdef R1PI_TEST_F16C
__attribute__((target("f16c"))) uint16_t hw_fp32_to_fp16(float f) {
  return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float hw_fp16_to_fp32(uint16_t h) { return _cvtsh_ss(h); }

TEST(Fp16, MatchesF16C) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "CPU has no F16C";
  for (uint32_t h = 0; h < 0x10000; ++h) {
    ASSERT_EQ(bits_of(fp16_to_fp32(uint16_t(h))), bits_of(hw_fp16_to_fp32(uint16_t(h)))) << std::hex << h;
  }
  auto check = [](uint32_t u) {
    const float f = from_bits(u);
    ASSERT_EQ(fp32_to_fp16(f), hw_fp32_to_fp16(f)) << std::hex << u;
  };
  // Where rounding decides: every midpoint between adjacent halves and its float neighbours.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float lo = fp16_to_fp32(uint16_t(h));
    const float hi = h + 1 < 0x7c00 ? fp16_to_fp32(uint16_t(h + 1)) : 65536.0f;
    const uint32_t mid = bits_of(0.5f * (lo + hi));  // exact: 12 significant bits at most
    for (uint32_t u : {mid - 1, mid, mid + 1}) {
      check(u);
      check(u | 0x80000000u);
    }
  }
  // A sweep over all bit patterns (NaNs, infinities, float subnormals included) and random ones.
  for (uint64_t u = 0; u < (1ull << 32); u += 257) check(uint32_t(u));
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i) check(uint32_t(rng()));
}
#endif

}  // namespace
}  // namespace r1pi
