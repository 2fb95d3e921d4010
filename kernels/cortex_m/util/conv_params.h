// The argument reading that quantized_conv2d_nhwc and quantized_depthwise_conv2d_nhwc share:
// their schemas agree but for depthwise's depth_multiplier, which shifts the later arguments.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_shape.h"

namespace pteron::cortex_m {

struct ConvParams {
  int32_t n, h, w, cin, oh, ow, cout, kh, kw;
  int32_t depth_multiplier;  // 1 for a plain convolution
  Window win;
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t in_off, out_off, act_min, act_max;
};

// input (args[0]), weight (args[1]) and out: int8, contiguous, rank 4.
inline Error check_conv_tensors(const char* op, const Tensor& in, const Tensor& wt,
                                const Tensor& out) {
  PTERON_TRY(check_int8(op, in, "input"));
  PTERON_TRY(check_int8(op, wt, "weight"));
  PTERON_TRY(check_int8(op, out, "out"));
  PTERON_TRY(check_rank(op, wt, 4, "weight"));
  return check_rank(op, in, 4, "input");
}

// Reads bias (args[2]), stride/padding/dilation (args[3..5]) and, from args[q] on,
// input_offset, output_offset, multipliers, shifts, activation min and max; the kernel size is
// weight dims 1 and 2 (OHWI and [1, kH, kW, C] alike), `out` is args[q + 7].
inline Error read_conv_params(const char* op, Span<EValue*> args, size_t q, int32_t cout,
                              ConvParams* p) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& wt = *args[1]->tensor;
  const Tensor& out = *args[q + 7]->tensor;
  PTERON_TRY(int_pair(op, *args[3], "stride", 1, p->win.stride));
  PTERON_TRY(int_pair(op, *args[4], "padding", 0, p->win.padding));
  PTERON_TRY(int_pair(op, *args[5], "dilation", 1, p->win.dilation));
  p->kh = p->win.kernel[0] = wt.size(1);
  p->kw = p->win.kernel[1] = wt.size(2);
  p->cout = cout;
  PTERON_TRY(check_nhwc_window(op, in, out, cout, p->win, false, true));
  PTERON_TRY(read_bias(op, *args[2], cout, &p->bias));
  PTERON_TRY(check_channel_requant(op, *args[q + 2]->tensor, *args[q + 3]->tensor, cout));
  PTERON_TRY(check_input_offset(op, args[q]->i));
  PTERON_TRY(check_zero_point(op, args[q + 1]->i, "output_offset"));
  PTERON_TRY(check_activation(op, args[q + 4]->i, args[q + 5]->i));
  p->n = in.size(0), p->h = in.size(1), p->w = in.size(2), p->cin = in.size(3);
  p->oh = out.size(1), p->ow = out.size(2);
  p->mult = args[q + 2]->tensor->data<int32_t>();
  p->shift = args[q + 3]->tensor->data<int32_t>();
  p->in_off = static_cast<int32_t>(args[q]->i);
  p->out_off = static_cast<int32_t>(args[q + 1]->i);
  p->act_min = static_cast<int32_t>(args[q + 4]->i);
  p->act_max = static_cast<int32_t>(args[q + 5]->i);
  return Error::Ok;
}

// The scalar reference loop both kernels share: for each output pixel and channel oc, bias plus
// tap_dot(x, oc, tap) over the taps inside the input (x: the tap's input pixel, all channels;
// tap: ky * kw + kx), requantized and clamped.
template <typename TapDot>
void conv_reference(const int8_t* in, int8_t* out, const ConvParams& params, TapDot tap_dot) {
  const ConvParams p = params;  // a local copy: int8 stores through `out` cannot alias it
  for (int32_t b = 0; b < p.n; ++b)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t oc = 0; oc < p.cout; ++oc) {
          int32_t acc = p.bias ? p.bias[oc] : 0;
          for (int32_t ky = 0; ky < p.kh; ++ky) {
            const int32_t iy = y0 + ky * p.win.dilation[0];
            if (iy < 0 || iy >= p.h) continue;
            for (int32_t kx = 0; kx < p.kw; ++kx) {
              const int32_t ix = x0 + kx * p.win.dilation[1];
              if (ix < 0 || ix >= p.w) continue;
              const int8_t* x = in + ((static_cast<int64_t>(b) * p.h + iy) * p.w + ix) * p.cin;
              acc += tap_dot(x, oc, ky * p.kw + kx);
            }
          }
          const int32_t r = requantize(acc, p.mult[oc], p.shift[oc]) + p.out_off;
          *out++ = static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
        }
      }
}

}  // namespace pteron::cortex_m
