// TOSA 1.0 integer scaling helpers, written as in the specification's pseudocode
// (apply_scale_32, apply_scale_16, reciprocal_scale) so the executor matches the reference
// model bit for bit.
#pragma once

#include <cstdint>

namespace pteron::tosa_rt {

inline int32_t clip_i64(int64_t v, int64_t lo, int64_t hi) {
  return int32_t(v < lo ? lo : (v > hi ? hi : v));
}

inline int32_t apply_scale_32(int64_t value, int32_t multiplier, int32_t shift, bool double_round) {
  int64_t round = int64_t(1) << (shift - 1);
  if (double_round && shift > 31) round += value >= 0 ? (int64_t(1) << 30) : -(int64_t(1) << 30);
  int64_t result = value * int64_t(multiplier) + round;
  result >>= shift;
  return int32_t(result);
}

inline int32_t apply_scale_16(int64_t value, int32_t multiplier, int32_t shift) {
  int64_t round = int64_t(1) << (shift - 1);
  int64_t result = value * int64_t(multiplier) + round;
  result >>= shift;
  return int32_t(result);
}

struct ScaleT {
  int32_t multiplier;
  int32_t shift;
};

inline ScaleT reciprocal_scale(uint32_t value) {
  int32_t k = value - 1 == 0 ? 0 : 32 - __builtin_clz(value - 1);
  int64_t numerator = ((int64_t(1) << 30) + 1) << k;
  return ScaleT{int32_t(numerator / value), 30 + k};
}

}  // namespace pteron::tosa_rt
