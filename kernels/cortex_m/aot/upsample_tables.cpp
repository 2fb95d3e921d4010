#include "kernels/cortex_m/aot/upsample_tables.h"

#include <cmath>

#include "kernels/cortex_m/util/upsample_taps.h"
#include "kernels/portable/util/upsample.h"

namespace pteron::cortex_m::aot {
namespace {

UpsampleShape shape_of(const UpsampleAxis& h, const UpsampleAxis& w) {
  UpsampleShape s;
  s.k = 2;
  s.in[0] = h.in, s.in[1] = w.in;
  s.out[0] = h.out, s.out[1] = w.out;
  s.scale[0] = h.scale, s.scale[1] = w.scale;
  s.has_scale[0] = h.scale > 0, s.has_scale[1] = w.scale > 0;
  return s;
}

}  // namespace

std::vector<int32_t> nearest_table(const UpsampleAxis& h, const UpsampleAxis& w, bool exact) {
  const UpsampleShape s = shape_of(h, w);
  std::vector<int32_t> t;
  for (int32_t d = 0; d < 2; ++d) {
    const float scale = upsample_scale<float>(s, d);
    for (int64_t o = 0; o < s.out[d]; ++o) {
      t.push_back(static_cast<int32_t>(upsample_nearest_index(o, s.in[d], s.out[d], scale, exact)));
    }
  }
  return t;
}

std::vector<int32_t> bilinear_table(const UpsampleAxis& h, const UpsampleAxis& w,
                                    bool align_corners) {
  const UpsampleShape s = shape_of(h, w);
  std::vector<int32_t> t;
  for (int32_t d = 0; d < 2; ++d) {
    const float scale = upsample_area_scale<float>(s, d, align_corners);
    for (int64_t o = 0; o < s.out[d]; ++o) {
      const LinearTaps<float> taps =
          upsample_linear_taps<float>(o, s.in[d], s.out[d], scale, align_corners);
      t.push_back(static_cast<int32_t>(taps.i0));
      t.push_back(static_cast<int32_t>(taps.i1));
      t.push_back(
          static_cast<int32_t>(std::floor(taps.w1 * static_cast<float>(kUpsampleOne) + 0.5f)));
    }
  }
  return t;
}

}  // namespace pteron::cortex_m::aot
