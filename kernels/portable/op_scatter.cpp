// aten::scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) ->
// Tensor(a!) aten::scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *,
// Tensor(a!) out) -> Tensor(a!) (one op, two overloads: a tensor or a scalar source)
#include <type_traits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out[..., index[p], ...] = src[p] (or the scalar) for every position p of index.
Error scatter_src_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter.src_out";
  int32_t dim = 0;
  int64_t src_strides[kMaxTensorDim];
  PTERON_TRY(start_scatter_src(kOp, args, &dim, src_strides));
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  Tensor& out = *args[4]->tensor;
  dispatch_word(out.element_size(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    W* dst = out.data<W>();
    const W* from = src.data<const W>();
    for_each_scatter(index, out, dim, src_strides, [&](int64_t o, int64_t s) { dst[o] = from[s]; });
  });
  return Error::Ok;
}

Error scatter_value_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter.value_out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const ScalarArg value(*args[3]);
  Tensor& out = *args[4]->tensor;
  int32_t dim = 0;
  PTERON_TRY(check_scatter_args(kOp, self, args[1]->i, index, nullptr, &dim));
  PTERON_TRY(check_scalar_fits_dtype(kOp, value, self.dtype()));
  PTERON_TRY(start_from_self(kOp, self, out));
  const int64_t zero[kMaxTensorDim] = {0};
  const bool ok = dispatch_dtype_in<kAllTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = store_value<T>(value.as<typename ComputeType<T>::type>());
    T* dst = out.data<T>();
    for_each_scatter(index, out, dim, zero, [&](int64_t o, int64_t) { dst[o] = v; });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::scatter.src_out", scatter_src_out, "TITTT");
PTERON_KERNEL("aten::scatter.value_out", scatter_value_out, "TITST");

}  // namespace pteron
