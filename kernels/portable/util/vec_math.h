// Elementary functions written so loops calling them auto-vectorise (no libm call, no branch),
// for kernels where exp dominates (softmax, log_softmax). Compile callers with
// -fno-trapping-math so GCC may if-convert the selects (see CMakeLists.txt).
#pragma once

#include <cstdint>

namespace pteron {

// e^x for float, within 1e-7 relative error (a few ulp) over [-87.33, 88.37]. Below that it
// returns 0 (no denormals), above it +inf (the true overflow is at 88.72); NaN stays NaN.
// Cody-Waite range reduction x = n ln2 + r, |r| <= ln2 / 2, then a degree-7 polynomial (Cephes
// expf coefficients) and 2^n built in the exponent bits.
inline float vexp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMax = 88.37f;
  constexpr float kMin = -87.33f;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float xc = x < kMax ? x : kMax;
  xc = xc > kMin ? xc : kMin;
  xc = x != x ? x : xc;                    // keep NaN
  const float t = xc * kLog2e + kShifter;  // low mantissa bits of t hold n = round(x log2 e)
  const float n = t - kShifter;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t bits;
  __builtin_memcpy(&bits, &t, 4);
  bits = (bits + 127u - 0x4B400000u) << 23;  // 2^n
  float scale;
  __builtin_memcpy(&scale, &bits, 4);
  const float y = x < kMin ? 0.0f : p * scale;
  return x > kMax ? __builtin_inff() : y;
}

inline double vexp(double x) { return __builtin_exp(x); }  // doubles are rare: libm

}  // namespace pteron
