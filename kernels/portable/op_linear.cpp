// aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out)
//     -> Tensor(a!)
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error linear_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::linear.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_rank(kOp, "weight", weight, 2));
  if (input.dim() < 1 || input.dim() > kMaxTensorDim) {
    return fail(Error::InvalidArgument, "%s: input must have rank 1 to %d", kOp, kMaxTensorDim);
  }
  const int32_t in_features = input.size(input.dim() - 1);
  if (in_features != weight.size(1)) {
    return fail(Error::InvalidArgument, "%s: input has %d features, weight expects %d", kOp,
                in_features, weight.size(1));
  }
  const Tensor* inputs[] = {&input, &weight};
  PTERON_TRY(expect_float_dtypes(kOp, out, inputs, 2));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[input.dim() - 1] = weight.size(0);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  int64_t in_rs = 0, out_rs = 0;
  if (!flat_row_stride(input, &in_rs) || !flat_row_stride(out, &out_rs)) {
    return fail(Error::NotSupported, "%s: leading dims of input/out must be in default order", kOp);
  }
  if (bias != nullptr) {
    if (bias->dtype() != out.dtype()) {
      return fail(Error::InvalidArgument, "%s: bias dtype %s differs from out dtype %s", kOp,
                  scalar_type_name(bias->dtype()), scalar_type_name(out.dtype()));
    }
    PTERON_TRY(broadcast_copy(kOp, *bias, out));
  }
  const int32_t last = input.dim() - 1;
  int64_t M = 1;
  for (int32_t d = 0; d < last; ++d) M *= input.size(d);
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // out = input * weight^T (+ bias already in out)
    MatrixRef<const T> a{input.data<const T>(), in_rs, input.stride(last)};
    MatrixRef<const T> b{weight.data<const T>(), weight.stride(1), weight.stride(0)};
    MatrixRef<T> c{out.data<T>(), out_rs, out.stride(last)};
    gemm<T>(ctx, M, weight.size(0), in_features, a, b, c, 1, bias != nullptr ? 1 : 0);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::linear.out", linear_out, "TTtT");

}  // namespace pteron
