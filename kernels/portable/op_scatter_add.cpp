// aten::scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out[..., index[p], ...] += src[p] for every position p of index, in order
// (repeated indices add up; integers wrap as torch's do).
Error scatter_add_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter_add.out";
  int32_t dim = 0;
  int64_t src_strides[kMaxTensorDim];
  PTERON_TRY(start_scatter_src(kOp, args, &dim, src_strides));
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  Tensor& out = *args[4]->tensor;
  const bool ok = dispatch_dtype_in<kAllTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    T* dst = out.data<T>();
    const T* from = src.data<const T>();
    for_each_scatter(index, out, dim, src_strides, [&](int64_t o, int64_t s) {
      dst[o] = store_value<T>(wrapping_add<C>(load_value(dst[o]), load_value(from[s])));
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::scatter_add.out", scatter_add_out, "TITTT");

}  // namespace pteron
