// The argument reading that quantized_avg_pool2d_nhwc and quantized_max_pool2d_nhwc share.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_shape.h"

namespace pteron::cortex_m {

// The shapes a pool sweeps; the max pool adds its offsets and activation range.
struct PoolShape {
  int32_t n, h, w, c, oh, ow;
  Window win;
};

// The average pool's result: the window's sum over its in-bounds count, rounded half away from
// zero, clamped to int8 (arm_avgpool_s8's).
inline int8_t rounded_mean(int32_t sum, int32_t count) {
  const int32_t q = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
  return static_cast<int8_t>(clamp_i32(q, kInt8Min, kInt8Max));
}

// The in-bounds window [y_lo, y_hi) x [x_lo, x_hi) of output pixel (oy, ox) of an undilated
// pool.
struct Bounds {
  int32_t y_lo, y_hi, x_lo, x_hi;
};
inline Bounds window_bounds(const PoolShape& p, int32_t oy, int32_t ox) {
  const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
  Bounds b;
  b.y_lo = y0 < 0 ? 0 : y0;
  b.y_hi = y0 + p.win.kernel[0] > p.h ? p.h : y0 + p.win.kernel[0];
  b.x_lo = x0 < 0 ? 0 : x0;
  b.x_hi = x0 + p.win.kernel[1] > p.w ? p.w : x0 + p.win.kernel[1];
  return b;
}

// The max pool's: the output zero point less the input's, and the activation range.
struct MaxPoolParams : PoolShape {
  int32_t zp_shift, act_min, act_max;
};

// input args[0] and `out`: int8 NHWC; kernel_size args[1], stride args[2] (empty: the kernel
// size), padding args[3], dilation `dilation` (none: 1), and out's shape that of the sweep
// (ceil_mode `ceil`).
inline Error read_pool_shape(const char* op, Span<EValue*> args, const EValue* dilation, bool ceil,
                             const Tensor& out, PoolShape* p) {
  const Tensor& in = *args[0]->tensor;
  PTERON_TRY(check_int8(op, in, "input"));
  PTERON_TRY(check_int8(op, out, "out"));
  PTERON_TRY(int_pair(op, *args[1], "kernel_size", 1, p->win.kernel));
  if (args[2]->int_list.size() == 0) {
    p->win.stride[0] = p->win.kernel[0], p->win.stride[1] = p->win.kernel[1];
  } else {
    PTERON_TRY(int_pair(op, *args[2], "stride", 1, p->win.stride));
  }
  PTERON_TRY(int_pair(op, *args[3], "padding", 0, p->win.padding));
  if (dilation != nullptr) {
    PTERON_TRY(int_pair(op, *dilation, "dilation", 1, p->win.dilation));
  } else {
    p->win.dilation[0] = p->win.dilation[1] = 1;
  }
  PTERON_TRY(check_rank(op, in, 4, "input"));
  PTERON_TRY(check_nhwc_window(op, in, out, in.size(3), p->win, ceil));
  p->n = in.size(0), p->h = in.size(1), p->w = in.size(2), p->c = in.size(3);
  p->oh = out.size(1), p->ow = out.size(2);
  return Error::Ok;
}

}  // namespace pteron::cortex_m
