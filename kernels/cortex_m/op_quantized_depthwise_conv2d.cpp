// cortex_m::quantized_depthwise_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias,
//     int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset,
//     int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts,
//     int activation_min, int activation_max, Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_depthwise_conv_s8: input [N, H, W, C] int8, weight [1, kH, kW, C * m] int8
// (ExecuTorch's layout), bias [C * m] int32, out [N, OH, OW, C * m]; output channel oc reads
// input channel oc / m. Requantisation per output channel as in quantized_conv2d_nhwc.
// The MVE path (depth multiplier 1) accumulates four channels per vector across the taps, for
// four neighbouring output pixels at once away from the left/right edges; no scratch.
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_shape.h"
#include "kernels/cortex_m/util/path.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_depthwise_conv2d_nhwc.out";

struct DwParams {
  int32_t n, h, w, cin, oh, ow, cout, kh, kw, mult_depth;
  Window win;
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t in_off, out_off, act_min, act_max;
};

void depthwise_scalar(const int8_t* in, const int8_t* wt, int8_t* out, const DwParams& p) {
  for (int32_t b = 0; b < p.n; ++b)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t oc = 0; oc < p.cout; ++oc) {
          const int32_t ic = oc / p.mult_depth;
          int32_t acc = p.bias ? p.bias[oc] : 0;
          for (int32_t ky = 0; ky < p.kh; ++ky) {
            const int32_t iy = y0 + ky * p.win.dilation[0];
            if (iy < 0 || iy >= p.h) continue;
            for (int32_t kx = 0; kx < p.kw; ++kx) {
              const int32_t ix = x0 + kx * p.win.dilation[1];
              if (ix < 0 || ix >= p.w) continue;
              const int8_t x = in[((static_cast<int64_t>(b) * p.h + iy) * p.w + ix) * p.cin + ic];
              acc += (x + p.in_off) * wt[(ky * p.kw + kx) * p.cout + oc];
            }
          }
          const int32_t r = requantize(acc, p.mult[oc], p.shift[oc]) + p.out_off;
          *out++ = static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
        }
      }
}

#if PTERON_CORTEX_M_MVE
inline void store_mve(int32x4_t acc, int8_t* out, int32_t c, mve_pred16_t pr, const DwParams& p) {
  int32x4_t r = requantize_mve(acc, vldrwq_z_s32(p.mult + c, pr), vldrwq_z_s32(p.shift + c, pr));
  r = vaddq_n_s32(r, p.out_off);
  r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(p.act_min)), vdupq_n_s32(p.act_max));
  vstrbq_p_s32(out + c, r, pr);
}

inline int32x4_t mac(int32x4_t acc, const int8_t* x, int32x4_t w, mve_pred16_t pr, int32_t off) {
  // MVE has no vector-by-vector VMLA.
  return vaddq_s32(acc, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x, pr), off), w));
}

// One output pixel, any window position (taps outside the input are skipped).
void pixel_mve(const int8_t* in, const int8_t* wt, int8_t* out, const DwParams& p, int32_t b,
               int32_t oy, int32_t ox) {
  const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
  for (int32_t c = 0; c < p.cout; c += 4) {
    const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(p.cout - c));
    int32x4_t acc = p.bias ? vldrwq_z_s32(p.bias + c, pr) : vdupq_n_s32(0);
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int32_t iy = y0 + ky * p.win.dilation[0];
      if (iy < 0 || iy >= p.h) continue;
      for (int32_t kx = 0; kx < p.kw; ++kx) {
        const int32_t ix = x0 + kx * p.win.dilation[1];
        if (ix < 0 || ix >= p.w) continue;
        const int8_t* x = in + ((static_cast<int64_t>(b) * p.h + iy) * p.w + ix) * p.cin + c;
        acc = mac(acc, x, vldrbq_z_s32(wt + (ky * p.kw + kx) * p.cout + c, pr), pr, p.in_off);
      }
    }
    store_mve(acc, out, c, pr, p);
  }
}

// Four horizontally adjacent output pixels whose windows lie inside the input's columns: each
// weight vector is loaded once for the four, and the input offset is applied once at the end
// as input_offset * (sum of the weights used), which is the same int32 value.
template <bool kTail>
inline void four_pixels_block(const int8_t* in_c, const int8_t* wt_c, int8_t* out, int32_t c,
                              const DwParams& p, int32_t y0, int32_t step) {
  const mve_pred16_t pr = kTail ? vctp32q(static_cast<uint32_t>(p.cout - c)) : mve_pred16_t(0xffff);
  auto load = [&](const int8_t* ptr) { return kTail ? vldrbq_z_s32(ptr, pr) : vldrbq_s32(ptr); };
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0, w_sum = a0;
  for (int32_t ky = 0; ky < p.kh; ++ky) {
    const int32_t iy = y0 + ky * p.win.dilation[0];
    if (iy < 0 || iy >= p.h) continue;
    const int8_t* row = in_c + static_cast<int64_t>(iy) * p.w * p.cin;
    const int8_t* wrow = wt_c + ky * p.kw * p.cout;
    for (int32_t kx = 0; kx < p.kw; ++kx) {
      const int8_t* x = row + kx * p.win.dilation[1] * p.cin;
      const int32x4_t w = load(wrow + kx * p.cout);
      w_sum = vaddq_s32(w_sum, w);
      // MVE has no vector-by-vector VMLA.
      a0 = vaddq_s32(a0, vmulq_s32(load(x), w));
      a1 = vaddq_s32(a1, vmulq_s32(load(x + step), w));
      a2 = vaddq_s32(a2, vmulq_s32(load(x + 2 * step), w));
      a3 = vaddq_s32(a3, vmulq_s32(load(x + 3 * step), w));
    }
  }
  int32x4_t base = p.bias ? vldrwq_z_s32(p.bias + c, pr) : vdupq_n_s32(0);
  base = vmlaq_n_s32(base, w_sum, p.in_off);
  store_mve(vaddq_s32(a0, base), out, c, pr, p);
  store_mve(vaddq_s32(a1, base), out + p.cout, c, pr, p);
  store_mve(vaddq_s32(a2, base), out + 2 * p.cout, c, pr, p);
  store_mve(vaddq_s32(a3, base), out + 3 * p.cout, c, pr, p);
}

void four_pixels_mve(const int8_t* in, const int8_t* wt, int8_t* out, const DwParams& p, int32_t b,
                     int32_t oy, int32_t ox) {
  const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
  const int32_t step = p.win.stride[1] * p.cin;
  const int8_t* base = in + (static_cast<int64_t>(b) * p.h * p.w + x0) * p.cin;
  int32_t c = 0;
  for (; c + 4 <= p.cout; c += 4) four_pixels_block<false>(base + c, wt + c, out, c, p, y0, step);
  if (c < p.cout) four_pixels_block<true>(base + c, wt + c, out, c, p, y0, step);
}

void depthwise_mve(const int8_t* in, const int8_t* wt, int8_t* out, const DwParams& p) {
  const int32_t reach = (p.kw - 1) * p.win.dilation[1];
  for (int32_t b = 0; b < p.n; ++b)
    for (int32_t oy = 0; oy < p.oh; ++oy) {
      int32_t ox = 0;
      while (ox < p.ow) {
        const int32_t first = ox * p.win.stride[1] - p.win.padding[1];
        const int32_t last = (ox + 3) * p.win.stride[1] - p.win.padding[1] + reach;
        if (ox + 4 <= p.ow && first >= 0 && last < p.w) {
          four_pixels_mve(in, wt, out, p, b, oy, ox);
          ox += 4, out += 4 * p.cout;
        } else {
          pixel_mve(in, wt, out, p, b, oy, ox);
          ++ox, out += p.cout;
        }
      }
    }
}
#endif

Error quantized_depthwise_conv2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTtLLLIIITTIItT"));
  const Tensor& in = *args[0]->tensor;
  const Tensor& wt = *args[1]->tensor;
  Tensor& out = *args[14]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, wt, "weight"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_rank(kOp, wt, 4, "weight"));
  PTERON_TRY(check_rank(kOp, in, 4, "input"));
  DwParams p{};
  const int64_t m = args[6]->i;
  if (m < 1 || wt.size(0) != 1 || static_cast<int64_t>(in.size(3)) * m != wt.size(3)) {
    return fail(Error::InvalidArgument,
                "%s: weight must be [1, kH, kW, C * depth_multiplier] with C = %d, m = %lld", kOp,
                static_cast<int>(in.size(3)), static_cast<long long>(m));
  }
  PTERON_TRY(int_pair(kOp, *args[3], "stride", 1, p.win.stride));
  PTERON_TRY(int_pair(kOp, *args[4], "padding", 0, p.win.padding));
  PTERON_TRY(int_pair(kOp, *args[5], "dilation", 1, p.win.dilation));
  p.kh = p.win.kernel[0] = wt.size(1);
  p.kw = p.win.kernel[1] = wt.size(2);
  p.cout = wt.size(3);
  p.mult_depth = static_cast<int32_t>(m);
  PTERON_TRY(check_nhwc_window(kOp, in, out, p.cout, p.win, false));
  PTERON_TRY(read_bias(kOp, *args[2], p.cout, &p.bias));
  PTERON_TRY(check_channel_requant(kOp, *args[9]->tensor, *args[10]->tensor, p.cout));
  PTERON_TRY(check_input_offset(kOp, args[7]->i));
  PTERON_TRY(check_zero_point(kOp, args[8]->i, "output_offset"));
  PTERON_TRY(check_activation(kOp, args[11]->i, args[12]->i));
  p.n = in.size(0), p.h = in.size(1), p.w = in.size(2), p.cin = in.size(3);
  p.oh = out.size(1), p.ow = out.size(2);
  p.mult = args[9]->tensor->data<int32_t>();
  p.shift = args[10]->tensor->data<int32_t>();
  p.in_off = static_cast<int32_t>(args[7]->i);
  p.out_off = static_cast<int32_t>(args[8]->i);
  p.act_min = static_cast<int32_t>(args[11]->i);
  p.act_max = static_cast<int32_t>(args[12]->i);
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve() && p.mult_depth == 1) {
    depthwise_mve(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
    return Error::Ok;
  }
#endif
  depthwise_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_depthwise_conv2d_nhwc.out", quantized_depthwise_conv2d_nhwc_out);

}  // namespace pteron::cortex_m
