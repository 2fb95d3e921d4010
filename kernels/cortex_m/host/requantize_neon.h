// util/requantize.h's requantize(value, multiplier, shift) on 4 int32 lanes, bit for bit the
// scalar's: SQRDMULH is the rounding doubling high multiply (it saturates only for INT32_MIN
// times INT32_MIN, and multipliers are not negative), and the rounding right shift subtracts
// one from negative values first so that SRSHL's half-up rounding goes away from zero
// (gemmlowp's RoundingDivideByPOT; the Cortex-M MVE path's requantize_mve). aarch64 only.
#pragma once

#include <arm_neon.h>

namespace pteron::cortex_m::host {

// `left` and `right` are the shift's parts: left = max(shift, 0), right = max(-shift, 0).
inline int32x4_t requantize_neon(int32x4_t value, int32x4_t mult, int32x4_t left, int32x4_t right) {
  const int32x4_t high = vqrdmulhq_s32(vshlq_s32(value, left), mult);
  const int32x4_t down = vnegq_s32(right);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, down), 31);
  return vrshlq_s32(vqaddq_s32(high, fixup), down);
}

// + offset, clamped to [lo, hi] (within int8), narrowed: the 4 bytes in the low lanes.
inline int8x8_t offset_clamp_to_int8(int32x4_t q, int32x4_t offset, int32x4_t lo, int32x4_t hi) {
  const int32x4_t c = vminq_s32(vmaxq_s32(vaddq_s32(q, offset), lo), hi);
  const int16x4_t words = vmovn_s32(c);
  return vmovn_s16(vcombine_s16(words, words));
}

// The first `count` of the 4 bytes to `out`.
inline void store_int8x4(int8_t* out, int8x8_t v, int64_t count) {
  if (count >= 4) {
    vst1_lane_s32(reinterpret_cast<int32_t*>(out), vreinterpret_s32_s8(v), 0);
    return;
  }
  int8_t bytes[8];
  vst1_s8(bytes, v);
  for (int64_t i = 0; i < count; ++i) out[i] = bytes[i];
}

}  // namespace pteron::cortex_m::host
