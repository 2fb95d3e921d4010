// Branch-free float16/bfloat16 <-> float conversions that inline and vectorise. Same results
// as runtime/core's half_to_float / float_to_half / float_to_bf16 (round to nearest even,
// subnormals, infinities; NaN becomes the quiet NaN 0x7e00 / (bits >> 16) | 0x40 with the sign).
//
// The float16 algorithms let the FPU do the rounding: scaling by powers of two moves the bits
// to round to the float's last place, so one add rounds exactly as float16 would.
#pragma once

#include <cstdint>

namespace pteron {

inline uint32_t bits_of(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// a if c else b, written with masks: GCC does not if-convert the ternary in these loops.
inline uint32_t select_bits(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (a & m) | (b & ~m);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;  // exponent and mantissa, sign shifted out
  // Normal numbers (and inf/NaN): rebias the exponent by 224 and scale back by 2^-112.
  const float normal = float_of((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  // Subnormals: place the mantissa under exponent 2^-1 and subtract the implicit 0.5.
  const float subnormal = float_of((two_w >> 17) | (126u << 23)) - 0.5f;
  return float_of(sign | select_bits(two_w < (1u << 27), bits_of(subnormal), bits_of(normal)));
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t w = bits_of(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  float abs_f = float_of(w & 0x7fffffffu);
  // Values too large for float16 become inf through the scaling (x * 2^112 * 2^-110).
  float base = (abs_f * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t bias = shl1_w & 0xFF000000u;
  bias = select_bits(bias < 0x71000000u, 0x71000000u, bias);  // float16 subnormal range
  base = float_of((bias >> 1) + 0x07800000u) + base;          // rounds to float16's last place
  const uint32_t bits = bits_of(base);
  const uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
  return static_cast<uint16_t>((sign >> 16) | select_bits(shl1_w > 0xFF000000u, 0x7E00u, nonsign));
}

inline float bf16_bits_to_float(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16_bits(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>(select_bits((x & 0x7fffffffu) > 0x7f800000u, nan, rounded));
}

}  // namespace pteron
