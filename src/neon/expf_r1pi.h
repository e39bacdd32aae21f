// The constants of expf_r1pi (declared in kernels.h), shared so every backend evaluates the very
// same polynomial. The recipe, in float with round-to-nearest-even:
//   NaN -> NaN; x < kExpMin -> 0; x > kExpMax -> +inf; otherwise
//   n = round_even(x * kLog2e)
//   r = fma(n, -kLn2Hi, x); r = fma(n, -kLn2Lo, r)           (Cody-Waite: the first step is exact)
//   p = kExpPoly[7]; p = fma(p, r, kExpPoly[k]) for k = 6..0   (Taylor series of e^r, degree 7)
//   result bits = bits(p) + (int(n) << 23)                     (scales by 2^n)
// Within [kExpMin, kExpMax], n lies in [-126, 128] and the result is a normal float, so the
// integer add on the exponent field never wraps.
#pragma once

namespace r1pi {

constexpr float kExpMin = -87.3f;  // just above ln(FLT_MIN) = -87.34: no subnormal results
constexpr float kExpMax = 88.7f;   // just below ln(FLT_MAX) = 88.72
constexpr float kLog2e = 1.44269504088896341f;
// ln 2 split so that n * kLn2Hi is exact for |n| <= 256 (kLn2Hi has 16 significant bits).
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682030941723212e-6f;
// 1/k!, each the float nearest the exact value. On |r| <= ln2/2 the degree-7 truncation error
// (r^8/8!) is below 0.05 ulp, so rounding in the Horner steps dominates.
constexpr float kExpPoly[8] = {1.0f,         1.0f,          1.0f / 2.0f,   1.0f / 6.0f,
                               1.0f / 24.0f, 1.0f / 120.0f, 1.0f / 720.0f, 1.0f / 5040.0f};

}  // namespace r1pi
