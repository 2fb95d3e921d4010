// pteron::conv2d_winograd.out(Tensor input, Tensor weight_winograd, Tensor? bias,
//     Tensor? residual, int[] padding, bool relu, *, Tensor(a!) out) -> Tensor(a!)
// A 3x3, stride-1, dilation-1, ungrouped float32 NCHW convolution (+ residual, of the output's
// shape, then ReLU if `relu`: convolution, convolution_relu and convolution_add_relu) whose
// weights compiler/passes/winograd_conv.cpp already transformed into weight_winograd
// [36, Cin, Cout] (F(4x4, 3x3)'s G g G^T). Runs util/winograd.h without the per-call weight
// transform. No portable kernel exists (the original weights are gone), so malformed arguments
// and missing scratch are errors naming the op.
#include "kernels/optimized/util/conv_output.h"
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/winograd.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "pteron::conv2d_winograd.out";

Error conv2d_winograd_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& u = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  const Tensor* residual = args[3]->is_none() ? nullptr : args[3]->tensor;
  const Span<const int64_t> padding = args[4]->int_list;
  const bool relu = args[5]->b;
  Tensor& out = *args[6]->tensor;
  if (!all_float32({&input, &u, bias, residual, &out})) {
    return fail(Error::NotSupported, "%s: float32 tensors only", kOp);
  }
  if (input.dim() != 4 || u.dim() != 3 || u.size(0) != 36 || u.size(1) != input.size(1)) {
    return fail(Error::InvalidArgument,
                "%s: needs a 4-D input and weights [36, Cin, Cout] with Cin = input.size(1)", kOp);
  }
  if (padding.size() != 2 || padding[0] < 0 || padding[1] < 0) {
    return fail(Error::InvalidArgument, "%s: padding must be two non-negative values", kOp);
  }
  ConvShape s;
  s.batch = input.size(0);
  s.in_channels = input.size(1);
  s.in_h = input.size(2);
  s.in_w = input.size(3);
  s.out_channels = u.size(2);
  s.kernel_h = s.kernel_w = 3;
  s.pad_h = padding[0];
  s.pad_w = padding[1];
  s.out_h = s.in_h + 2 * s.pad_h - 2;
  s.out_w = s.in_w + 2 * s.pad_w - 2;
  if (s.out_h <= 0 || s.out_w <= 0) {
    return fail(Error::InvalidArgument,
                "%s: input %lldx%lld with padding %lld,%lld is smaller "
                "than the 3x3 kernel",
                kOp, static_cast<long long>(s.in_h), static_cast<long long>(s.in_w),
                static_cast<long long>(s.pad_h), static_cast<long long>(s.pad_w));
  }
  PTERON_TRY(check_conv_output(kOp, s, bias, out, residual));
  if (!is_row_major(input) || !is_row_major(u) || !is_row_major(out) ||
      (bias != nullptr && !is_row_major(*bias)) ||
      (residual != nullptr && !is_row_major(*residual))) {
    return fail(Error::NotSupported, "%s: contiguous (NCHW) tensors only", kOp);
  }
  if (out.numel() == 0) return Error::Ok;
  if (!winograd_conv(ctx, s, input.data<const float>(), nullptr, u.data<const float>(),
                     bias != nullptr ? bias->data<const float>() : nullptr,
                     residual != nullptr ? residual->data<const float>() : nullptr,
                     out.data<float>(), relu)) {
    return fail(Error::OutOfMemory, "%s: not enough scratch memory for %lldx%lld tiles", kOp,
                static_cast<long long>((s.out_h + 3) / 4),
                static_cast<long long>((s.out_w + 3) / 4));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::conv2d_winograd.out", conv2d_winograd_out, "TTttLBT");

}  // namespace pteron::optimized
