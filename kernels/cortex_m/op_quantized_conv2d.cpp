// cortex_m::quantized_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride,
//     int[] padding, int[] dilation, int input_offset, int output_offset,
//     Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//     int activation_max, Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_convolve_s8 (groups 1): input [N, H, W, Cin] int8, weight [Cout, kH, kW, Cin]
// int8 (symmetric: no weight offset), bias [Cout] int32, per-channel Q31 multipliers/shifts
// (int32 [Cout]), out [N, OH, OW, Cout] int8.
//   acc = bias[oc] + sum over taps inside the input of (x + input_offset) * w
//   out = clamp(requantize(acc, mult[oc], shift[oc]) + output_offset, act_min, act_max)
// The MVE path (arm_convolve_s8's MVE form) builds one im2col column per output pixel with
// padding filled by -input_offset, dots it with each filter (contiguous in OHWI) 16 lanes at a
// time and adds input_offset * sum(w), precomputed per filter; 1x1 convolutions with stride 1
// and no padding skip the column (the fast path). Scratch: quantized_conv2d_scratch_bytes.
#include <cstring>

#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_shape.h"
#include "kernels/cortex_m/util/path.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_conv2d_nhwc.out";

struct ConvParams {
  int32_t n, h, w, cin, oh, ow, cout, kh, kw;
  Window win;
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t in_off, out_off, act_min, act_max;
};

inline int8_t finish(int32_t acc, int32_t oc, const ConvParams& p) {
  const int32_t r = requantize(acc, p.mult[oc], p.shift[oc]) + p.out_off;
  return static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
}

void conv_scalar(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p) {
  const int32_t tap_stride = p.cin, filter_size = p.kh * p.kw * p.cin;
  for (int32_t b = 0; b < p.n; ++b)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t oc = 0; oc < p.cout; ++oc) {
          int32_t acc = p.bias ? p.bias[oc] : 0;
          const int8_t* filter = wt + static_cast<int64_t>(oc) * filter_size;
          for (int32_t ky = 0; ky < p.kh; ++ky) {
            const int32_t iy = y0 + ky * p.win.dilation[0];
            if (iy < 0 || iy >= p.h) continue;
            for (int32_t kx = 0; kx < p.kw; ++kx) {
              const int32_t ix = x0 + kx * p.win.dilation[1];
              if (ix < 0 || ix >= p.w) continue;
              const int8_t* x = in + ((static_cast<int64_t>(b) * p.h + iy) * p.w + ix) * p.cin;
              const int8_t* f = filter + (ky * p.kw + kx) * tap_stride;
              for (int32_t c = 0; c < p.cin; ++c) acc += (x[c] + p.in_off) * f[c];
            }
          }
          *out++ = finish(acc, oc, p);
        }
      }
}

#if PTERON_CORTEX_M_MVE
int32_t dot_mve(const int8_t* a, const int8_t* b, int32_t len) {
  int32_t acc = 0;
  for (int32_t i = 0; i < len; i += 16) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    acc = vmladavaq_s8(acc, vldrbq_z_s8(a + i, pr), vldrbq_z_s8(b + i, pr));
  }
  return acc;
}

int32_t sum_mve(const int8_t* a, int32_t len) {
  int32_t acc = 0;
  for (int32_t i = 0; i < len; i += 16) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    acc = vaddvaq_s8(acc, vldrbq_z_s8(a + i, pr));
  }
  return acc;
}

// All output channels of one pixel from its column (filter_size bytes, padding = -in_off).
// Four dot products of `column` with four filters at once: each column vector is loaded once
// for four multiply-accumulates. Full vectors unpredicated; the tail loads zeros past the end.
void dot4_mve(const int8_t* column, const int8_t* w0, int32_t len, int32_t acc[4]) {
  const int8_t* w1 = w0 + len;
  const int8_t* w2 = w1 + len;
  const int8_t* w3 = w2 + len;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int32_t i = 0;
  for (; i + 16 <= len; i += 16) {
    const int8x16_t c = vldrbq_s8(column + i);
    a0 = vmladavaq_s8(a0, c, vldrbq_s8(w0 + i));
    a1 = vmladavaq_s8(a1, c, vldrbq_s8(w1 + i));
    a2 = vmladavaq_s8(a2, c, vldrbq_s8(w2 + i));
    a3 = vmladavaq_s8(a3, c, vldrbq_s8(w3 + i));
  }
  if (i < len) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    const int8x16_t c = vldrbq_z_s8(column + i, pr);
    a0 = vmladavaq_s8(a0, c, vldrbq_z_s8(w0 + i, pr));
    a1 = vmladavaq_s8(a1, c, vldrbq_z_s8(w1 + i, pr));
    a2 = vmladavaq_s8(a2, c, vldrbq_z_s8(w2 + i, pr));
    a3 = vmladavaq_s8(a3, c, vldrbq_z_s8(w3 + i, pr));
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

// All output channels of one pixel from its column (filter_size bytes, padding = -in_off).
void pixel_mve(const int8_t* column, const int8_t* wt, const int32_t* offset_sums, int8_t* out,
               const ConvParams& p, int32_t filter_size) {
  int32_t oc = 0;
  for (; oc + 4 <= p.cout; oc += 4) {
    alignas(16) int32_t acc[4];
    dot4_mve(column, wt + static_cast<int64_t>(oc) * filter_size, filter_size, acc);
    int32x4_t v = vaddq_s32(vldrwq_s32(acc), vldrwq_s32(offset_sums + oc));
    v = requantize_mve(v, vldrwq_s32(p.mult + oc), vldrwq_s32(p.shift + oc));
    v = vaddq_n_s32(v, p.out_off);
    v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(p.act_min)), vdupq_n_s32(p.act_max));
    vstrbq_s32(out + oc, v);
  }
  for (; oc < p.cout; ++oc) {
    const int32_t acc = dot_mve(column, wt + static_cast<int64_t>(oc) * filter_size, filter_size);
    out[oc] = finish(acc + offset_sums[oc], oc, p);
  }
}

void conv_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p, void* scratch,
              bool pointwise) {
  const int32_t filter_size = p.kh * p.kw * p.cin;
  // bias + input_offset * sum(filter): the offset term of every tap, padding included.
  int32_t* offset_sums = static_cast<int32_t*>(scratch);
  for (int32_t oc = 0; oc < p.cout; ++oc) {
    offset_sums[oc] = (p.bias ? p.bias[oc] : 0) +
                      p.in_off * sum_mve(wt + static_cast<int64_t>(oc) * filter_size, filter_size);
  }
  if (pointwise) {
    const int64_t pixels = static_cast<int64_t>(p.n) * p.h * p.w;
    for (int64_t i = 0; i < pixels; ++i, in += p.cin, out += p.cout) {
      pixel_mve(in, wt, offset_sums, out, p, filter_size);
    }
    return;
  }
  int8_t* column = static_cast<int8_t*>(scratch) + align_scratch(p.cout * sizeof(int32_t));
  const int8_t pad = static_cast<int8_t>(-p.in_off);
  for (int32_t b = 0; b < p.n; ++b)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox, out += p.cout) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        int8_t* dst = column;
        for (int32_t ky = 0; ky < p.kh; ++ky) {
          const int32_t iy = y0 + ky * p.win.dilation[0];
          for (int32_t kx = 0; kx < p.kw; ++kx, dst += p.cin) {
            const int32_t ix = x0 + kx * p.win.dilation[1];
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) {
              std::memset(dst, pad, static_cast<size_t>(p.cin));
            } else {
              std::memcpy(dst, in + ((static_cast<int64_t>(b) * p.h + iy) * p.w + ix) * p.cin,
                          static_cast<size_t>(p.cin));
            }
          }
        }
        pixel_mve(column, wt, offset_sums, out, p, filter_size);
      }
}
#endif

Error quantized_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTtLLLIITTIItT"));
  const Tensor& in = *args[0]->tensor;
  const Tensor& wt = *args[1]->tensor;
  Tensor& out = *args[13]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, wt, "weight"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_rank(kOp, wt, 4, "weight"));
  PTERON_TRY(check_rank(kOp, in, 4, "input"));
  if (wt.size(3) != in.size(3)) {
    return fail(Error::NotSupported,
                "%s: weight has %d input channels, input %d (grouped convolutions are not "
                "supported; depthwise has its own op)",
                kOp, static_cast<int>(wt.size(3)), static_cast<int>(in.size(3)));
  }
  ConvParams p{};
  PTERON_TRY(int_pair(kOp, *args[3], "stride", 1, p.win.stride));
  PTERON_TRY(int_pair(kOp, *args[4], "padding", 0, p.win.padding));
  PTERON_TRY(int_pair(kOp, *args[5], "dilation", 1, p.win.dilation));
  p.kh = p.win.kernel[0] = wt.size(1);
  p.kw = p.win.kernel[1] = wt.size(2);
  p.cout = wt.size(0);
  PTERON_TRY(check_nhwc_window(kOp, in, out, p.cout, p.win, false));
  PTERON_TRY(read_bias(kOp, *args[2], p.cout, &p.bias));
  PTERON_TRY(check_channel_requant(kOp, *args[8]->tensor, *args[9]->tensor, p.cout));
  PTERON_TRY(check_input_offset(kOp, args[6]->i));
  PTERON_TRY(check_zero_point(kOp, args[7]->i, "output_offset"));
  PTERON_TRY(check_activation(kOp, args[10]->i, args[11]->i));
  p.n = in.size(0), p.h = in.size(1), p.w = in.size(2), p.cin = in.size(3);
  p.oh = out.size(1), p.ow = out.size(2);
  p.mult = args[8]->tensor->data<int32_t>();
  p.shift = args[9]->tensor->data<int32_t>();
  p.in_off = static_cast<int32_t>(args[6]->i);
  p.out_off = static_cast<int32_t>(args[7]->i);
  p.act_min = static_cast<int32_t>(args[10]->i);
  p.act_max = static_cast<int32_t>(args[11]->i);
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    const bool pointwise = p.kh == 1 && p.kw == 1 && p.win.stride[0] == 1 && p.win.stride[1] == 1 &&
                           p.win.padding[0] == 0 && p.win.padding[1] == 0;
    const size_t bytes = quantized_conv2d_scratch_bytes(p.cin, p.kh, p.kw, p.cout, pointwise);
    if (void* scratch = kernel_scratch(ctx, *args[12], bytes)) {
      conv_mve(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch, pointwise);
      return Error::Ok;
    }
  }
#endif
  conv_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_conv2d_nhwc.out", quantized_conv2d_nhwc_out);

}  // namespace pteron::cortex_m
