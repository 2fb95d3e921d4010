// aten::scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool
// include_self=True, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/scatter_reduce.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::scatter_reduce.two_out";

// out = self; every src[p] is reduced into out[..., index[p], ...] (sum, prod, mean, amax, amin),
// with or without self's value, in every dtype (bool: or / and, no mean). Mean divides by the
// number of values reduced (flooring for integers, as torch); positions nothing is scattered to
// keep self.
Error scatter_reduce_two_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  ScatterReduce reduce;
  PTERON_TRY(read_scatter_reduce_arg(kOp, *args[4], /*with_sum=*/true, &reduce));
  const bool include_self = args[5]->b;
  Tensor& out = *args[6]->tensor;
  // bool reduces as torch: sum and amax are a logical or, prod and amin a logical and (the
  // shared arithmetic, stored as bool); torch has no mean of bool.
  PTERON_CHECK(self.dtype() != ScalarType::Bool || reduce != ScatterReduce::Mean,
               Error::NotSupported, "%s: mean of bool is not supported (as in torch)", kOp);
  int32_t dim = 0;
  PTERON_TRY(check_scatter_args(kOp, self, args[1]->i, index, &src, &dim));
  PTERON_TRY(start_from_self(kOp, self, out));
  if (index.numel() == 0) return Error::Ok;
  int64_t src_strides[kMaxTensorDim];
  scatter_src_strides(index, src, src_strides);
  int32_t* counts = nullptr;
  PTERON_TRY(mean_counts(ctx, kOp, reduce, include_self, out.numel(), &counts));
  const bool ok = dispatch_dtype_in<kAllTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_scattered(reduce, include_self, src.data<const T>(), out.data<T>(), counts,
                     [&](auto fn, int64_t) {
                       for_each_scatter(index, out, dim, src_strides, fn);
                       return true;
                     });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::scatter_reduce.two_out", scatter_reduce_two_out, "TITT*BT");

}  // namespace pteron
