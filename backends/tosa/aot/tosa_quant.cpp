#include "backends/tosa/aot/tosa_quant.h"

#include <cmath>

namespace pteron::tosa_aot {

std::optional<TosaScale> tosa_scale32(double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) return std::nullopt;
  int exponent = 0;
  const double mantissa = std::frexp(factor, &exponent);  // factor = mantissa * 2^exponent
  int64_t multiplier = std::llround(mantissa * 2147483648.0);  // mantissa in [0.5, 1)
  if (multiplier == (int64_t{1} << 31)) {
    multiplier /= 2;
    ++exponent;
  }
  int shift = 31 - exponent;
  // Tiny factors: fewer multiplier bits instead of a shift beyond 62.
  while (shift > 62 && multiplier > 0) {
    multiplier = (multiplier + 1) >> 1;
    --shift;
  }
  if (shift < 2 || shift > 62 || multiplier <= 0) return std::nullopt;
  return TosaScale{static_cast<int32_t>(multiplier), static_cast<int8_t>(shift)};
}

int32_t tosa_apply_scale32(int32_t value, TosaScale s) {
  const int64_t round = int64_t{1} << (s.shift - 1);
  const int64_t r = (static_cast<int64_t>(value) * s.multiplier + round) >> s.shift;
  if (r > INT32_MAX) return INT32_MAX;
  if (r < INT32_MIN) return INT32_MIN;
  return static_cast<int32_t>(r);
}

}  // namespace pteron::tosa_aot
