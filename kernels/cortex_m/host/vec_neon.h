// The host paths' vector type for NEON (aarch64's baseline): 4 int32 lanes, 16 bytes: what
// vector_loops.h and the convolution tile's epilogue (int8_tile_epilogue.h) are written over. Only
// this ISA's sources include it (they are compiled with its flags).
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

namespace pteron::cortex_m::host {

struct Neon {
  static constexpr int64_t kLanes = 4, kByteLanes = 16;
  using I32 = int32x4_t;
  static int32x4_t set1(int32_t v) { return vdupq_n_s32(v); }
  static float32x4_t set1f(float v) { return vdupq_n_f32(v); }
  static int32x4_t load_i8(const int8_t* p, int64_t count) {
    int32_t four = 0;
    if (count >= 4) {
      std::memcpy(&four, p, 4);  // a fixed size: one load, not a call
    } else {
      std::memcpy(&four, p, static_cast<size_t>(count));
    }
    const int16x8_t words = vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(four)));
    return vmovl_s16(vget_low_s16(words));
  }
  static int32x4_t load_i32(const int32_t* p, int64_t count) {
    if (count >= 4) return vld1q_s32(p);
    int32_t lanes[4] = {};
    std::memcpy(lanes, p, static_cast<size_t>(count) * sizeof(int32_t));
    return vld1q_s32(lanes);
  }
  static float32x4_t load_f32(const float* p, int64_t count) {
    if (count >= 4) return vld1q_f32(p);
    float lanes[4] = {};
    std::memcpy(lanes, p, static_cast<size_t>(count) * sizeof(float));
    return vld1q_f32(lanes);
  }
  static int32x4_t add(int32x4_t a, int32x4_t b) { return vaddq_s32(a, b); }
  static int32x4_t sub(int32x4_t a, int32x4_t b) { return vsubq_s32(a, b); }
  static int32x4_t mullo(int32x4_t a, int32x4_t b) { return vmulq_s32(a, b); }
  static int32x4_t shl(int32x4_t a, int bits) { return vshlq_s32(a, vdupq_n_s32(bits)); }
  // util/requantize.h's requantize(value, multiplier, shift), bit for bit: SQRDMULH is the
  // rounding doubling high multiply (it saturates only for INT32_MIN times INT32_MIN, and
  // multipliers are not negative), and the rounding right shift subtracts one from negative values
  // first so that SRSHL's half-up rounding goes away from zero (gemmlowp's RoundingDivideByPOT;
  // the MVE path's requantize_mve). left = max(shift, 0), right = max(-shift, 0).
  static int32x4_t requantize(int32x4_t value, int32x4_t mult, int32x4_t left, int32x4_t right) {
    const int32x4_t high = vqrdmulhq_s32(vshlq_s32(value, left), mult);
    const int32x4_t down = vnegq_s32(right);
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, down), 31);
    return vrshlq_s32(vqaddq_s32(high, fixup), down);
  }
  static int32x4_t quantize_lanes(float32x4_t x, float32x4_t scale, float32x4_t lo,
                                  float32x4_t hi) {
    const float32x4_t r = vrndnq_f32(vmulq_f32(x, scale));  // half to even, as nearbyint
    const float32x4_t clamped = vminq_f32(vmaxq_f32(r, lo), hi);
    return vcvtq_s32_f32(vbslq_f32(vceqq_f32(r, r), clamped, vdupq_n_f32(0.0f)));  // NaN: 0
  }
  // All lanes, as int32.
  static void store_i32(int32_t* p, int32x4_t v) { vst1q_s32(p, v); }
  // q + offset clamped to [lo, hi] (within int8), the first `count` as bytes.
  static void store_i8(int8_t* out, int32x4_t q, int32x4_t offset, int32x4_t lo, int32x4_t hi,
                       int64_t count) {
    const int32x4_t c = vminq_s32(vmaxq_s32(vaddq_s32(q, offset), lo), hi);
    const int16x4_t words = vmovn_s32(c);
    const int8x8_t v = vmovn_s16(vcombine_s16(words, words));
    if (count >= 4) {
      vst1_lane_s32(reinterpret_cast<int32_t*>(out), vreinterpret_s32_s8(v), 0);
      return;
    }
    int8_t bytes[8];
    vst1_s8(bytes, v);
    for (int64_t i = 0; i < count; ++i) out[i] = bytes[i];
  }
  static int8x16_t min_bytes() { return vdupq_n_s8(-128); }
  static int8x16_t load_bytes(const int8_t* p, int64_t count) {
    if (count >= 16) return vld1q_s8(p);
    int8_t lanes[16];
    std::memset(lanes, -128, sizeof lanes);
    std::memcpy(lanes, p, static_cast<size_t>(count));
    return vld1q_s8(lanes);
  }
  static int8x16_t max_bytes(int8x16_t a, int8x16_t b) { return vmaxq_s8(a, b); }
  static void spill_bytes(int8x16_t v, int8_t* out) { vst1q_s8(out, v); }
  // out[i] = table[in[i] + 128] over 256 entries: four 64-byte table lookups, each later one
  // (tbx) replacing the lanes whose index falls in its quarter.
  static void lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n) {
    const auto* t = reinterpret_cast<const uint8_t*>(table);
    const uint8x16x4_t q0 = vld1q_u8_x4(t), q1 = vld1q_u8_x4(t + 64), q2 = vld1q_u8_x4(t + 128),
                       q3 = vld1q_u8_x4(t + 192);
    const uint8x16_t flip = vdupq_n_u8(0x80), quarter = vdupq_n_u8(64);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      uint8x16_t x = veorq_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(in + i)), flip);
      uint8x16_t r = vqtbl4q_u8(q0, x);
      x = vsubq_u8(x, quarter);
      r = vqtbx4q_u8(r, q1, x);
      x = vsubq_u8(x, quarter);
      r = vqtbx4q_u8(r, q2, x);
      x = vsubq_u8(x, quarter);
      r = vqtbx4q_u8(r, q3, x);
      vst1q_u8(reinterpret_cast<uint8_t*>(out + i), r);
    }
    for (; i < n; ++i) out[i] = table[in[i] + 128];
  }
};

}  // namespace pteron::cortex_m::host
