// cortex_m::quantized_max_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride,
//     int[] padding, int[] dilation, bool ceil_mode, int input_zero_point,
//     int output_zero_point, int activation_min, int activation_max, *, Tensor(a!) out)
//
// CMSIS-NN arm_max_pool_s8 on [N, H, W, C] int8: the maximum of the window's in-bounds values
// (padding never wins), moved from the input to the output zero point (the lowering only
// uses equal scales) and clamped to [activation_min, activation_max], so a following relu is
// fused. The MVE path takes 16 channels per vector.
#include "kernels/cortex_m/util/path.h"
#include "kernels/cortex_m/util/pool_params.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_max_pool2d_nhwc.out";

inline int8_t finish(int32_t m, const MaxPoolParams& p) {
  return static_cast<int8_t>(clamp_i32(m + p.zp_shift, p.act_min, p.act_max));
}

void max_scalar(const int8_t* in, int8_t* out, const MaxPoolParams& p) {
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * p.c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t c = 0; c < p.c; ++c) {
          int32_t m = kInt8Min;
          for (int32_t ky = 0; ky < p.win.kernel[0]; ++ky) {
            const int32_t y = y0 + ky * p.win.dilation[0];
            if (y < 0 || y >= p.h) continue;
            for (int32_t kx = 0; kx < p.win.kernel[1]; ++kx) {
              const int32_t x = x0 + kx * p.win.dilation[1];
              if (x < 0 || x >= p.w) continue;
              const int32_t v = in[(y * p.w + x) * p.c + c];
              m = v > m ? v : m;
            }
          }
          *out++ = finish(m, p);
        }
      }
}

#if PTERON_CORTEX_M_MVE
void max_mve(const int8_t* in, int8_t* out, const MaxPoolParams& p) {
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * p.c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox, out += p.c) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t c = 0; c < p.c; c += 16) {
          const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(p.c - c));
          int8x16_t m = vdupq_n_s8(kInt8Min);
          for (int32_t ky = 0; ky < p.win.kernel[0]; ++ky) {
            const int32_t y = y0 + ky * p.win.dilation[0];
            if (y < 0 || y >= p.h) continue;
            for (int32_t kx = 0; kx < p.win.kernel[1]; ++kx) {
              const int32_t x = x0 + kx * p.win.dilation[1];
              if (x < 0 || x >= p.w) continue;
              m = vmaxq_s8(m, vldrbq_z_s8(in + (y * p.w + x) * p.c + c, pr));
            }
          }
          // int8 + zp shift may leave int8 before the clamp: widen (zp_shift is 0 in practice).
          if (p.zp_shift == 0) {
            m = vminq_s8(vmaxq_s8(m, vdupq_n_s8(static_cast<int8_t>(p.act_min))),
                         vdupq_n_s8(static_cast<int8_t>(p.act_max)));
            vstrbq_p_s8(out + c, m, pr);
          } else {
            int8_t lanes[16];
            vstrbq_s8(lanes, m);
            const int32_t live = p.c - c < 16 ? p.c - c : 16;
            for (int32_t j = 0; j < live; ++j) out[c + j] = finish(lanes[j], p);
          }
        }
      }
}
#endif

Error quantized_max_pool2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[10]->tensor;
  MaxPoolParams p{};
  PTERON_TRY(read_pool_shape(kOp, args, args[4], args[5]->b, out, &p));
  PTERON_TRY(check_zero_point(kOp, args[6]->i, "input_zero_point"));
  PTERON_TRY(check_zero_point(kOp, args[7]->i, "output_zero_point"));
  PTERON_TRY(check_activation(kOp, args[8]->i, args[9]->i));
  p.zp_shift = static_cast<int32_t>(args[7]->i - args[6]->i);
  p.act_min = static_cast<int32_t>(args[8]->i);
  p.act_max = static_cast<int32_t>(args[9]->i);
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    max_mve(in.data<int8_t>(), out.data<int8_t>(), p);
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::max_pool(in.data<int8_t>(), out.data<int8_t>(), p)) return Error::Ok;
#endif
  max_scalar(in.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_max_pool2d_nhwc.out", quantized_max_pool2d_nhwc_out,
              "TLLLLBIIIIT");

}  // namespace pteron::cortex_m
