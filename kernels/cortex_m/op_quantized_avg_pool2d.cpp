// cortex_m::quantized_avg_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride,
//     int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift,
//     Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_avgpool_s8 on [N, H, W, C] int8 with input and output sharing scale and zero
// point: the mean of the window's in-bounds values (padding is not counted; the lowering pads
// explicitly with the zero point when torch counts it), rounded half away from zero, clamped
// to int8. zero_point, multiplier and shift are ExecuTorch's arguments and do not change the
// result. The MVE path sums four channels per vector; the divide stays scalar per lane.
#include "kernels/cortex_m/util/path.h"
#include "kernels/cortex_m/util/pool_params.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_avg_pool2d_nhwc.out";

using PoolParams = PoolShape;

void avg_scalar(const int8_t* in, int8_t* out, const PoolParams& p) {
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * p.c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox) {
        const Bounds bd = window_bounds(p, oy, ox);
        const int32_t count = (bd.y_hi - bd.y_lo) * (bd.x_hi - bd.x_lo);
        for (int32_t c = 0; c < p.c; ++c) {
          int32_t sum = 0;
          for (int32_t y = bd.y_lo; y < bd.y_hi; ++y)
            for (int32_t x = bd.x_lo; x < bd.x_hi; ++x) sum += in[(y * p.w + x) * p.c + c];
          *out++ = count > 0 ? rounded_mean(sum, count) : 0;
        }
      }
}

#if PTERON_CORTEX_M_MVE
void avg_mve(const int8_t* in, int8_t* out, const PoolParams& p) {
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * p.c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox, out += p.c) {
        const Bounds bd = window_bounds(p, oy, ox);
        const int32_t count = (bd.y_hi - bd.y_lo) * (bd.x_hi - bd.x_lo);
        for (int32_t c = 0; c < p.c; c += 4) {
          const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(p.c - c));
          int32x4_t sum = vdupq_n_s32(0);
          for (int32_t y = bd.y_lo; y < bd.y_hi; ++y)
            for (int32_t x = bd.x_lo; x < bd.x_hi; ++x)
              sum = vaddq_s32(sum, vldrbq_z_s32(in + (y * p.w + x) * p.c + c, pr));
          int32_t lanes[4];
          vstrwq_s32(lanes, sum);
          const int32_t live = p.c - c < 4 ? p.c - c : 4;
          for (int32_t j = 0; j < live; ++j)
            out[c + j] = count > 0 ? rounded_mean(lanes[j], count) : 0;
        }
      }
}
#endif

Error quantized_avg_pool2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[9]->tensor;
  PoolParams p{};
  PTERON_TRY(read_pool_shape(kOp, args, nullptr, args[4]->b, out, &p));
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    avg_mve(in.data<int8_t>(), out.data<int8_t>(), p);
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::avg_pool(in.data<int8_t>(), out.data<int8_t>(), p)) return Error::Ok;
#endif
  avg_scalar(in.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_avg_pool2d_nhwc.out", quantized_avg_pool2d_nhwc_out,
              "TLLLBIIItT");

}  // namespace pteron::cortex_m
