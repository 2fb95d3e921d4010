// cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other,
//     int other_zero_point, int output_zero_point, int output_multiplier, int output_shift, *,
//     Tensor(a!) out)
//
// CMSIS-NN arm_elementwise_mul_s8: (a - zp_a) * (b - zp_b) requantised to the output scale,
// offset and clamped to int8. `self` has out's shape; `other` has it too or broadcasts to it
// as rows (util/broadcast_rows.h: a squeeze-excite's [N, 1, 1, C] against [N, H, W, C]), each
// row then run by the same element loop.
#include "kernels/cortex_m/util/add_params.h"
#include "kernels/cortex_m/util/broadcast_rows.h"
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_mul.out";

void mul_scalar(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prod = (a[i] - p.zp1) * (b[i] - p.zp2);
    const int32_t r = requantize(prod, p.out_mult, p.out_shift) + p.out_zp;
    out[i] = static_cast<int8_t>(clamp_i32(r, kInt8Min, kInt8Max));
  }
}

#if PTERON_CORTEX_M_MVE
void mul_mve(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(n - i));
    const int32x4_t x = vsubq_n_s32(vldrbq_z_s32(a + i, pred), p.zp1);
    const int32x4_t y = vsubq_n_s32(vldrbq_z_s32(b + i, pred), p.zp2);
    int32x4_t r = vaddq_n_s32(requantize_mve(vmulq_s32(x, y), p.out_mult, p.out_shift), p.out_zp);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(kInt8Min)), vdupq_n_s32(kInt8Max));
    vstrbq_p_s32(out + i, r, pred);
  }
}
#endif

Error check_operands(const Tensor& a, const Tensor& b, const Tensor& out, const EValue* const* zps,
                     BroadcastRows* rows) {
  PTERON_TRY(check_int8(kOp, a, "self"));
  PTERON_TRY(check_int8(kOp, b, "other"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_same_shape(kOp, a, out, "self and out"));
  if (!broadcast_rows(out.sizes().data(), out.dim(), b.sizes().data(), b.dim(), rows)) {
    return fail(Error::InvalidArgument,
                "%s: other's shape neither matches out's nor broadcasts to it as rows ([outer, 1, "
                "inner] against [outer, mid, inner])",
                kOp);
  }
  PTERON_TRY(check_zero_point(kOp, zps[0]->i, "self_zero_point"));
  PTERON_TRY(check_zero_point(kOp, zps[1]->i, "other_zero_point"));
  return check_zero_point(kOp, zps[2]->i, "output_zero_point");
}

Error quantized_mul_out(KernelContext&, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[2]->tensor;
  Tensor& out = *args[7]->tensor;
  BroadcastRows rows;
  const EValue* zps[3] = {args[1], args[3], args[4]};
  PTERON_TRY(check_operands(a, b, out, zps, &rows));
  PTERON_TRY(check_requant(kOp, args[5]->i, args[6]->i, "output"));
  const MulParams p{static_cast<int32_t>(args[1]->i), static_cast<int32_t>(args[3]->i),
                    static_cast<int32_t>(args[4]->i), static_cast<int32_t>(args[5]->i),
                    static_cast<int32_t>(args[6]->i)};
  const int8_t* x = a.data<int8_t>();
  const int8_t* y = b.data<int8_t>();
  int8_t* z = out.data<int8_t>();
  const bool broadcast = rows.mid > 1;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    if (!broadcast) {
      mul_mve(x, y, z, out.numel(), p);
    } else {
      for_each_broadcast_row(x, y, z, rows, 0, broadcast_row_count(rows),
                             [&](const int8_t* ra, const int8_t* rb, int8_t* ro, int64_t n) {
                               mul_mve(ra, rb, ro, n, p);
                             });
    }
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (broadcast ? host::mul_broadcast(x, y, z, rows, p) : host::mul(x, y, z, out.numel(), p))
    return Error::Ok;
#endif
  for_each_broadcast_row(x, y, z, rows, 0, broadcast_row_count(rows),
                         [&](const int8_t* ra, const int8_t* rb, int8_t* ro, int64_t n) {
                           mul_scalar(ra, rb, ro, n, p);
                         });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_mul.out", quantized_mul_out, "TITIIIIT");

}  // namespace pteron::cortex_m
