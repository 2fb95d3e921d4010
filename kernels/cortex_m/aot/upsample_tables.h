// The constant tables the cortex_m upsample kernels read (kernels/cortex_m/util/upsample_taps.h),
// computed at compile time with torch's float formulas as the portable kernels write them
// (kernels/portable/util/upsample.h), so the int8 kernels pick torch's source pixels.
#pragma once

#include <cstdint>
#include <vector>

namespace pteron::cortex_m::aot {

// One spatial axis of an upsample: sizes, and torch's scale factor (output / input) when the
// call gave one (else 0).
struct UpsampleAxis {
  int64_t in, out;
  double scale;
};

// [OH + OW] source indices: nearest (`exact`: nearest-exact).
std::vector<int32_t> nearest_table(const UpsampleAxis& h, const UpsampleAxis& w, bool exact);

// [OH + OW, 3]: i0, i1 and i1's weight in Q11 (torch's lambda, rounded half up).
std::vector<int32_t> bilinear_table(const UpsampleAxis& h, const UpsampleAxis& w,
                                    bool align_corners);

}  // namespace pteron::cortex_m::aot
