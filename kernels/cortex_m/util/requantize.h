// TFLite/CMSIS-NN fixed-point arithmetic shared by the Cortex-M int8 kernels.
//
// The scalar functions are the reference: every MVE (Helium) path must give the same bits.
// Requantisation is CMSIS-NN's arm_nn_requantize: a left shift, a rounding doubling high
// multiply by a Q31 multiplier (round half up, no saturation: multipliers are positive), then a
// rounding right shift (midpoint away from zero). The MVE versions use VQRDMULH and VRSHL with
// a sign fix-up, which give exactly these results for multipliers in [0, 2^31).
#pragma once

#include <cstdint>

// PTERON_CORTEX_M_SCALAR_ONLY builds the scalar reference alone on an MVE or DSP target (the
// firmware's scalar build, for comparison). A core with MVE takes the MVE paths; one with only
// the DSP extension (Cortex-M4, M7) the DSP paths (util/dsp.h).
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(PTERON_CORTEX_M_SCALAR_ONLY)
#include <arm_mve.h>
#define PTERON_CORTEX_M_MVE 1
#elif defined(__ARM_FEATURE_DSP) && !defined(PTERON_CORTEX_M_SCALAR_ONLY)
#define PTERON_CORTEX_M_DSP 1
#endif

namespace pteron::cortex_m {

constexpr int32_t kInt8Min = -128;
constexpr int32_t kInt8Max = 127;

// Shifts a requantisation may use: the multiplier brings the value into [2^30, 2^31) * 2^shift.
constexpr int32_t kMinShift = -31;
constexpr int32_t kMaxShift = 30;

inline int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

// (a * b + 2^30) >> 31: VQRDMULH for b != INT32_MIN.
inline int32_t doubling_high_mult_no_sat(int32_t a, int32_t b) {
  return static_cast<int32_t>((static_cast<int64_t>(a) * b + (int64_t{1} << 30)) >> 31);
}

// TFLite's SaturatingRoundingDoublingHighMul (softmax's fixed-point math): rounds half away
// from zero, saturates INT32_MIN * INT32_MIN.
inline int32_t doubling_high_mult_sat(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t p = static_cast<int64_t>(a) * b;
  p += ((a < 0) != (b < 0)) ? (1 - (int64_t{1} << 30)) : (int64_t{1} << 30);
  return static_cast<int32_t>(p / (int64_t{1} << 31));
}

// x / 2^exponent rounded to nearest, midpoint away from zero; exponent in [0, 31].
inline int32_t rounding_divide_by_pot(int32_t x, int32_t exponent) {
  if (exponent == 0) return x;
  const int32_t mask = static_cast<int32_t>((uint32_t{1} << exponent) - 1u);
  const int32_t remainder = x & mask;
  const int32_t result = x >> exponent;
  const int32_t threshold = (mask >> 1) + (result < 0 ? 1 : 0);
  return result + (remainder > threshold ? 1 : 0);
}

// A requantisation shift's two parts: a left shift before the multiply, a right one after.
inline int32_t requantize_left_shift(int32_t shift) { return shift > 0 ? shift : 0; }
inline int32_t requantize_right_shift(int32_t shift) { return shift > 0 ? 0 : -shift; }

// CMSIS-NN arm_nn_requantize (double rounding): value * multiplier * 2^(shift - 31).
inline int32_t requantize(int32_t value, int32_t multiplier, int32_t shift) {
  const int32_t left = requantize_left_shift(shift);
  const int32_t right = requantize_right_shift(shift);
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(value) << left);
  return rounding_divide_by_pot(doubling_high_mult_no_sat(shifted, multiplier), right);
}

// Saturating value * 2^exponent (softmax helper), exponent in [0, 31).
inline int32_t saturating_mult_by_pot(int32_t value, int32_t exponent) {
  const int32_t threshold = static_cast<int32_t>((uint32_t{1} << (31 - exponent)) - 1u);
  if (value > threshold) return INT32_MAX;
  if (value < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(value) << exponent);
}

#if PTERON_CORTEX_M_MVE
// requantize() on four lanes with one multiplier and shift.
inline int32x4_t requantize_mve(int32x4_t value, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32x4_t right = vdupq_n_s32(shift > 0 ? 0 : shift);  // negative: shift right
  const int32x4_t high = vqrdmulhq_n_s32(vshlq_s32(value, vdupq_n_s32(left)), multiplier);
  // VRSHL rounds the midpoint up; subtracting one from negative values first makes it round
  // away from zero, as rounding_divide_by_pot does.
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, right), 31);
  return vrshlq_s32(vqaddq_s32(high, fixup), right);
}

// requantize() on four lanes with a multiplier and shift per lane (per-channel weights).
inline int32x4_t requantize_mve(int32x4_t value, int32x4_t multiplier, int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t left = vmaxq_s32(shift, zero);
  const int32x4_t right = vminq_s32(shift, zero);
  const int32x4_t high = vqrdmulhq_s32(vshlq_s32(value, left), multiplier);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, right), 31);
  return vrshlq_s32(vqaddq_s32(high, fixup), right);
}

// The end of every accumulating kernel on four lanes: requantize (one multiplier/shift, or one
// per lane), add the output offset, clamp to the activation range.
template <typename Mult, typename Shift>
inline int32x4_t requantize_clamp_mve(int32x4_t acc, Mult multiplier, Shift shift, int32_t out_off,
                                      int32_t act_min, int32_t act_max) {
  const int32x4_t r = vaddq_n_s32(requantize_mve(acc, multiplier, shift), out_off);
  return vminq_s32(vmaxq_s32(r, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
}
#endif

}  // namespace pteron::cortex_m
