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
