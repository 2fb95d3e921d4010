// Shared by the upsample kernels (nearest, linear, bilinear, bicubic, antialiased bilinear):
// output sizes from output_size / scale factors, and the source positions and weights of each
// output index computed exactly as ATen's CPU kernels do (aten/src/ATen/native/UpSample.h), so
// nearest picks the same pixels and interpolations round the same way.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

constexpr int32_t kMaxUpsampleDims = 3;

// Spatial geometry of one upsample call: the last `k` dims of a (k+2)-d input.
struct UpsampleShape {
  int32_t k = 0;
  int64_t in[kMaxUpsampleDims] = {}, out[kMaxUpsampleDims] = {};
  double scale[kMaxUpsampleDims] = {};  // the caller's scale factor (output / input)
  bool has_scale[kMaxUpsampleDims] = {};
};

// `.vec` forms: exactly one of output_size (int list of k) and scale_factors (double list of
// k) is given; out size = floor(in * scale) as torch computes it.
Error upsample_shape_vec(const char* op, const Tensor& self, int32_t k, const EValue& output_size,
                         const EValue& scale_factors, UpsampleShape* s);
// `.out` forms: output_size (k ints) and one optional double scale per spatial dim.
Error upsample_shape_out(const char* op, const Tensor& self, int32_t k, const EValue& output_size,
                         EValue* const* scales, UpsampleShape* s);
// Checks the out tensor (same dtype, shape [N, C, out...]) and resizes it when dynamic.
Error upsample_check_out(const char* op, const Tensor& self, Tensor& out, const UpsampleShape& s);

// compute_scales_value: input/output ratio, or 1/scale when the caller gave a scale.
template <typename S>
inline S upsample_scale(const UpsampleShape& s, int32_t d) {
  return s.has_scale[d] && s.scale[d] > 0 ? static_cast<S>(1.0 / s.scale[d])
                                          : static_cast<S>(s.in[d]) / static_cast<S>(s.out[d]);
}

// area_pixel_compute_scale.
template <typename S>
inline S upsample_area_scale(const UpsampleShape& s, int32_t d, bool align_corners) {
  if (align_corners) {
    return s.out[d] > 1 ? static_cast<S>(s.in[d] - 1) / static_cast<S>(s.out[d] - 1) : S(0);
  }
  return upsample_scale<S>(s, d);
}

// area_pixel_compute_source_index.
template <typename S>
inline S upsample_source_index(S scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<S>(dst);
  const S src = scale * (static_cast<S>(dst) + S(0.5)) - S(0.5);
  return (!cubic && src < S(0)) ? S(0) : src;
}

// A source index from its real position, clamped to [lo, in - 1] before the cast (a scale from
// the program may put it far outside; NaN gives in - 1).
template <typename S>
inline int64_t upsample_clamped_index(S f, int64_t lo, int64_t in) {
  if (!(f < static_cast<S>(in - 1))) return in - 1;
  if (!(f > static_cast<S>(lo))) return lo;
  return static_cast<int64_t>(f);
}

// nearest_idx / nearest_exact_idx (float arithmetic, as ATen).
inline int64_t upsample_nearest_index(int64_t dst, int64_t in, int64_t out, float scale,
                                      bool exact) {
  if (!exact) {
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    return upsample_clamped_index(std::floor(static_cast<float>(dst) * scale), 0, in);
  }
  return upsample_clamped_index(std::floor((static_cast<float>(dst) + 0.5f) * scale), 0, in);
}

// The two taps of linear interpolation (compute_source_index_and_lambda).
template <typename S>
struct LinearTaps {
  int64_t i0, i1;
  S w0, w1;
};

template <typename S>
inline LinearTaps<S> upsample_linear_taps(int64_t dst, int64_t in, int64_t out, S scale,
                                          bool align_corners) {
  if (in == out) return {dst, dst, S(1), S(0)};
  const S real = upsample_source_index<S>(scale, dst, align_corners, false);
  const int64_t i0 = upsample_clamped_index(std::floor(real), 0, in);
  S lambda = real - static_cast<S>(i0);
  lambda = lambda < S(0) ? S(0) : (lambda > S(1) ? S(1) : lambda);
  const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  return {i0, i1, S(1) - lambda, lambda};
}

// The four taps of bicubic interpolation: get_cubic_upsample_coefficients with A = -0.75,
// indices clamped to the input (ATen's HelperInterpCubic).
template <typename S>
struct CubicTaps {
  int64_t idx[4];
  S w[4];
};

template <typename S>
inline CubicTaps<S> upsample_cubic_taps(int64_t dst, int64_t in, S scale, bool align_corners) {
  const S real = upsample_source_index<S>(scale, dst, align_corners, true);
  const int64_t i = upsample_clamped_index(std::floor(real), -2, in);
  S t = real - static_cast<S>(i);
  t = t < S(0) ? S(0) : (t > S(1) ? S(1) : t);
  const S a = S(-0.75);
  auto conv1 = [a](S x) { return ((a + S(2)) * x - (a + S(3))) * x * x + S(1); };
  auto conv2 = [a](S x) { return ((a * x - S(5) * a) * x + S(8) * a) * x - S(4) * a; };
  CubicTaps<S> r;
  r.w[0] = conv2(t + S(1));
  r.w[1] = conv1(t);
  const S t2 = S(1) - t;
  r.w[2] = conv1(t2);
  r.w[3] = conv2(t2 + S(1));
  for (int j = 0; j < 4; ++j) {
    const int64_t v = i - 1 + j;
    r.idx[j] = v < 0 ? 0 : (v > in - 1 ? in - 1 : v);
  }
  return r;
}

// Runs nearest (or nearest-exact) upsampling: one element copy per output element, any dtype,
// any dim orders (indices go through both tensors' strides).
void upsample_nearest_run(const Tensor& self, Tensor& out, const UpsampleShape& s, bool exact);

enum class UpsampleInterp { Linear, Cubic };
// Runs (bi/tri)linear or bicubic interpolation for floating dtypes and uint8 (rounded to
// nearest). Returns NotSupported naming `op` for other dtypes.
Error upsample_interp_run(const char* op, const Tensor& self, Tensor& out, const UpsampleShape& s,
                          bool align_corners, UpsampleInterp mode);

// An interpolated value (computed in S) stored as T: integers round halves up and saturate,
// as ATen's fixed-point paths do; floating types convert. Shared by upsample_interp_run and
// the separable (antialiased) resize.
template <typename T, typename S>
T store_interpolated(S v) {
  if constexpr (std::is_integral_v<T>) {
    const S r = std::floor(v + S(0.5));  // fixed point rounds halves up in ATen
    const S lo = static_cast<S>(std::numeric_limits<T>::min());
    const S hi = static_cast<S>(std::numeric_limits<T>::max());
    return static_cast<T>(r < lo ? lo : (r > hi ? hi : r));
  } else {
    return store_value<T>(v);
  }
}

}  // namespace pteron
