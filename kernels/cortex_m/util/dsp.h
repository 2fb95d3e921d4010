// The DSP extension's SIMD-within-a-register instructions (Cortex-M4, M7, M33...) the int8
// kernels' DSP paths use, as inline functions: GCC 12's ACLE header has no SXTB16 with a
// rotation, and writing them out keeps each one a single instruction.
//
// The int8 dot product on DSP: a word of four int8 values [a0 a1 a2 a3] becomes two words of two
// int16 halves, SXTB16 giving [a0, a2] and SXTB16 ROR #8 giving [a1, a3]; SMLAD multiplies two
// such words half by half and adds both products to an accumulator. Both operands extended the
// same way, two SMLAD make a 4-element dot product. SXTAB16 extends and adds a pair of int16
// halves on the way (an input offset on both halves), for operands extended once and reused.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cortex_m/util/requantize.h"

#if PTERON_CORTEX_M_DSP
namespace pteron::cortex_m::dsp {

inline int32_t sxtb16(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1" : "=r"(r) : "r"(x));
  return r;
}
inline int32_t sxtb16_ror8(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
// add + [x0, x2] (each half: int16 add of the sign-extended byte)
inline int32_t sxtab16(int32_t add, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2" : "=r"(r) : "r"(add), "r"(x));
  return r;
}
inline int32_t sxtab16_ror8(int32_t add, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(add), "r"(x));
  return r;
}
// [a.lo, b.lo << 16 .hi]: the bottom half of a, the top half of b shifted left by 16
inline int32_t pkhbt_lsl16(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// [(b >> 16).lo, a.hi]: the top half of a, the top half of b moved to the bottom
inline int32_t pkhtb_asr16(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// acc + a.lo * b.lo + a.hi * b.hi (int16 halves, wrapping int32 sum as the scalar reference's)
inline int32_t smlad(int32_t a, int32_t b, int32_t acc) {
  int32_t r;
  __asm__("smlad %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
}
// Four bytes from any address (LDR takes unaligned addresses on ARMv7E-M).
inline int32_t load_word(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_word(void* p, int32_t v) { std::memcpy(p, &v, 4); }

// A channel's requantisation as the DSP paths' assembly reads it: requantize(acc, mult, shift)
// for a multiplier in [2^30, 2^31) and a right shift of 1 to 20 (what int8 convolutions have),
// in 5 instructions given the result is then clamped to an int8 range:
//   a = QADD(acc, acc); h = SMMULR(a, mult); h += h >> 31; h = QADD(h, half); h >>= right.
// SMMULR(2 acc, mult) is the doubling high multiply (acc * mult + 2^30) >> 31 exactly unless
// 2 acc saturates (|acc| >= 2^30); then both it and the exact value are >= 2^29 - 1 in
// magnitude with the same sign, >= 511 after the shift: clamped alike. h > -2^31, so h - 1
// never wraps; the rounding add saturates only when the exact result is 2^(31 - right) >= 2^11:
// clamped alike too. Other channels take requantize().
struct RequantRecord {
  int32_t mult = 0, right = 0, half = 0;
  RequantRecord() = default;
  RequantRecord(int32_t m, int32_t shift)
      : mult(m), right(-shift), half(shift < 0 && shift >= -31 ? 1 << (-shift - 1) : 0) {}
  bool fast() const { return mult >= (1 << 30) && right >= 1 && right <= 20; }
};

// RequantRecord's arithmetic on `acc` in place, as assembly text (the DSP paths' loops): the
// record's multiplier, right shift and half in registers m, r, h, the output offset in `off`;
// the result is offset and saturated to int8 (SSAT). 7 instructions.
#define PTERON_DSP_REQUANT(acc, m, r, h, off) \
  "   qadd        " acc ", " acc ", " acc     \
  "      \n"                                  \
  "   smmulr      " acc ", " acc ", " m       \
  "        \n"                                \
  "   add         " acc ", " acc ", " acc     \
  ", asr #31 \n"                              \
  "   qadd        " acc ", " acc ", " h       \
  "        \n"                                \
  "   asr         " acc ", " acc ", " r       \
  "        \n"                                \
  "   add         " acc ", " acc ", " off     \
  "      \n"                                  \
  "   ssat        " acc ", #8, " acc "           \n"
// The activation range [lo, hi] (registers) on `acc`, when it is not all of int8. 6 instructions.
#define PTERON_DSP_CLAMP(acc, lo, hi)                \
  "   cmp         " acc ", " lo                      \
  "                \n"                               \
  "   it          lt                             \n" \
  "   movlt       " acc ", " lo                      \
  "                \n"                               \
  "   cmp         " acc ", " hi                      \
  "                \n"                               \
  "   it          gt                             \n" \
  "   movgt       " acc ", " hi "                \n"

// requantize(acc, multiplier, -right) for right shifts in [1, kMaxFastRight], in 9 instructions
// (SMLAL for the doubling high multiply with its rounding, QADD for the rounding shift's),
// given the caller clamps the result to an int8 range: then it equals requantize()'s wherever
// that range matters. The doubling high multiply h is > -2^31, so h - 1 never wraps; the
// rounding add saturates only when h + 2^(right - 1) >= 2^31, where the exact result,
// 2^(31 - right) or more, and the saturated one, one less, both exceed 255 (right <= 23).
// `half` is 2^(right - 1).
constexpr int32_t kMaxFastRight = 23;
inline int32_t requantize_right(int32_t acc, int32_t multiplier, int32_t right, int32_t half) {
  const int64_t prod = static_cast<int64_t>(acc) * multiplier + (int64_t{1} << 30);
  const auto h = static_cast<int32_t>(static_cast<uint64_t>(prod) >> 31);
  int32_t r;
  __asm__("qadd %0, %1, %2" : "=r"(r) : "r"(h + (h >> 31)), "r"(half));
  return r >> right;
}

}  // namespace pteron::cortex_m::dsp
#endif
