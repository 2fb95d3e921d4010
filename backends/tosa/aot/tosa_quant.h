// TOSA's integer requantisation parameters (TOSA 1.0 spec, RESCALE): a real factor as a 32-bit
// multiplier and a shift, value * multiplier >> shift with rounding, shift in [2, 62].
#pragma once

#include <cstdint>
#include <optional>

namespace pteron::tosa_aot {

struct TosaScale {
  int32_t multiplier = 0;  // in [2^30, 2^31) for a normal factor
  int8_t shift = 0;        // in [2, 62]
};

// factor ~= multiplier * 2^-shift. nullopt when the factor is not positive and finite or does
// not fit TOSA's shift range (factor >= 2^29 or so small that the multiplier underflows).
std::optional<TosaScale> tosa_scale32(double factor);

// TOSA's apply_scale_32 with SINGLE_ROUND (what the reference model computes), for tests and
// for folding constants: (value * multiplier + 2^(shift-1)) >> shift.
int32_t tosa_apply_scale32(int32_t value, TosaScale s);

}  // namespace pteron::tosa_aot
