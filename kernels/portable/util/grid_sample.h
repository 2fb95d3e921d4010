// grid_sampler_2d's coordinate arithmetic (ATen's GridSamplerKernel.cpp: unnormalize, the
// padding modes' clip and reflect), shared by the portable and optimized kernels so that both
// sample the same input positions.
#pragma once

#include <cmath>
#include <cstdint>

namespace pteron {

enum GridInterp { kGridBilinear = 0, kGridNearest = 1, kGridBicubic = 2 };
enum GridPadding { kGridZeros = 0, kGridBorder = 1, kGridReflection = 2 };

// One axis of the input: maps a grid coordinate to an input coordinate (ComputeLocation).
template <typename S>
struct GridAxis {
  int64_t size;
  int padding;
  bool align_corners;

  S unnormalize(S v) const {
    return align_corners ? (v + S(1)) * (static_cast<S>(size - 1) / S(2))
                         : (v + S(1)) * (static_cast<S>(size) / S(2)) - S(0.5);
  }
  S clip(S v) const {
    const S hi = static_cast<S>(size - 1);
    return std::fmin(hi, std::fmax(v, S(0)));
  }
  S reflect(S v) const {
    const S low = align_corners ? S(0) : S(-0.5);
    const S twice_span = align_corners ? static_cast<S>(2 * (size - 1)) : static_cast<S>(2 * size);
    if (twice_span == S(0)) return S(0);
    const S a = std::fabs(v - low);
    const S flips = std::trunc(a / twice_span);
    const S extra = a - flips * twice_span;
    return std::fmin(extra, twice_span - extra) + low;
  }
  // compute_coordinates: the padding mode's map (zeros: none).
  S pad(S v) const {
    if (padding == kGridBorder) return clip(v);
    if (padding == kGridReflection) return clip(reflect(v));
    return v;
  }
  bool inside(int64_t i) const { return i >= 0 && i < size; }
  // floor()ed coordinate as an index; far-off (or NaN) values become -2 or size + 1, outside
  // like them, without an out-of-range cast.
  int64_t index(S v) const {
    if (!(v > S(-2))) return -2;
    if (!(v < static_cast<S>(size + 1))) return size + 1;
    return static_cast<int64_t>(v);
  }
};

}  // namespace pteron
