// cortex_m::upsample_bilinear2d_nhwc.out(Tensor input, Tensor taps, int input_zero_point,
//     int output_zero_point, int multiplier, int shift, *, Tensor(a!) out)
//
// pteron's own op: bilinear resize of int8 NHWC with integer arithmetic. The taps table
// (util/upsample_taps.h) gives each output row and column its two source indices and the second
// one's weight in Q11 (the lowering rounds torch's float lambdas; the first weight is 2^11 minus
// it, so a constant image stays constant). Each output value is
//   acc = sum over the four taps of wy * wx * (q - input_zero_point)     (Q22, exact in int32)
//   out = clamp(requantize(acc, multiplier, shift) + output_zero_point, -128, 127)
// with multiplier/shift encoding input_scale / (output_scale * 2^22), CMSIS-NN's requantisation
// (util/requantize.h). Channels are contiguous, so the MVE path takes four channels a vector
// (VMLA by the pixel's four weights) and requantises them together; the scalar path is the
// reference and both give the same bits.
#include "kernels/cortex_m/util/path.h"
#include "kernels/cortex_m/util/upsample_taps.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::upsample_bilinear2d_nhwc.out";

struct Blend {
  int32_t zp_in, zp_out, mult, shift;
};

// One output pixel's four source pixels (C channels each) and weights (Q22, summing to 2^22).
struct Pixel {
  const int8_t *a, *b, *c, *d;
  int32_t wa, wb, wc, wd;
};

inline void blend_scalar(const Pixel& px, int32_t channels, const Blend& p, int8_t* out) {
  const int32_t offset = p.zp_in * (1 << (2 * kUpsampleWeightBits));
  for (int32_t ch = 0; ch < channels; ++ch) {
    const int32_t acc =
        px.wa * px.a[ch] + px.wb * px.b[ch] + px.wc * px.c[ch] + px.wd * px.d[ch] - offset;
    out[ch] = static_cast<int8_t>(
        clamp_i32(requantize(acc, p.mult, p.shift) + p.zp_out, kInt8Min, kInt8Max));
  }
}

#if PTERON_CORTEX_M_MVE
inline void blend_mve(const Pixel& px, int32_t channels, const Blend& p, int8_t* out) {
  const int32_t offset = p.zp_in * (1 << (2 * kUpsampleWeightBits));
  for (int32_t ch = 0; ch < channels; ch += 4) {
    const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(channels - ch));
    int32x4_t acc = vmulq_n_s32(vldrbq_z_s32(px.a + ch, pr), px.wa);
    acc = vmlaq_n_s32(acc, vldrbq_z_s32(px.b + ch, pr), px.wb);
    acc = vmlaq_n_s32(acc, vldrbq_z_s32(px.c + ch, pr), px.wc);
    acc = vmlaq_n_s32(acc, vldrbq_z_s32(px.d + ch, pr), px.wd);
    acc = vsubq_n_s32(acc, offset);
    vstrbq_p_s32(out + ch, requantize_clamp_mve(acc, p.mult, p.shift, p.zp_out, kInt8Min, kInt8Max),
                 pr);
  }
}
#endif

// The pixel loop, with the blend of the path inlined.
template <bool kMve>
void upsample(const Tensor& in, const int32_t* rows, const Blend& p, Tensor& out) {
  const int32_t h = in.size(1), w = in.size(2), c = in.size(3);
  const int32_t oh = out.size(1), ow = out.size(2);
  const int32_t* cols = rows + 3 * oh;
  const int8_t* x = in.data<const int8_t>();
  int8_t* y = out.data<int8_t>();
  for (int32_t n = 0; n < in.size(0); ++n) {
    const int8_t* image = x + static_cast<int64_t>(n) * h * w * c;
    for (int32_t oy = 0; oy < oh; ++oy) {
      const int8_t* top = image + static_cast<int64_t>(rows[3 * oy]) * w * c;
      const int8_t* bottom = image + static_cast<int64_t>(rows[3 * oy + 1]) * w * c;
      const int32_t wy1 = rows[3 * oy + 2], wy0 = kUpsampleOne - wy1;
      for (int32_t ox = 0; ox < ow; ++ox, y += c) {
        const int32_t x0 = cols[3 * ox] * c, x1 = cols[3 * ox + 1] * c;
        const int32_t wx1 = cols[3 * ox + 2], wx0 = kUpsampleOne - wx1;
        const Pixel px{top + x0,  top + x1,  bottom + x0, bottom + x1,
                       wy0 * wx0, wy0 * wx1, wy1 * wx0,   wy1 * wx1};
#if PTERON_CORTEX_M_MVE
        if constexpr (kMve) {
          blend_mve(px, c, p, y);
          continue;
        }
#endif
        blend_scalar(px, c, p, y);
      }
    }
  }
}

Error upsample_bilinear2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& taps = *args[1]->tensor;
  Tensor& out = *args[6]->tensor;
  PTERON_TRY(check_upsample(kOp, in, taps, 3, out));
  PTERON_TRY(check_zero_point(kOp, args[2]->i, "input_zero_point"));
  PTERON_TRY(check_zero_point(kOp, args[3]->i, "output_zero_point"));
  PTERON_TRY(check_requant(kOp, args[4]->i, args[5]->i, "output"));
  const Blend p{static_cast<int32_t>(args[2]->i), static_cast<int32_t>(args[3]->i),
                static_cast<int32_t>(args[4]->i), static_cast<int32_t>(args[5]->i)};
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    upsample<true>(in, taps.data<const int32_t>(), p, out);
    return Error::Ok;
  }
#endif
  upsample<false>(in, taps.data<const int32_t>(), p, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::upsample_bilinear2d_nhwc.out", upsample_bilinear2d_nhwc_out, "TTIIIIT");

}  // namespace pteron::cortex_m
