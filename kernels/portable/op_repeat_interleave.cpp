// aten::repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None, Tensor(a!) out)
// out = [0] * repeats[0] ++ [1] * repeats[1] ++ ... (the index form that
// x.repeat_interleave(repeats, dim) exports to, followed by index_select). repeats is a 1-D
// int32/int64 tensor of non-negative counts; out has its dtype and sum(repeats)
// elements, which must equal output_size when given.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error repeat_interleave_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::repeat_interleave.Tensor_out";
  const Tensor& repeats = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(repeats.dim() == 1, Error::InvalidArgument, "%s: repeats must be 1-D, got %d dims",
               kOp, static_cast<int>(repeats.dim()));
  PTERON_TRY(expect_index_dtype(kOp, repeats, "repeats", /*allow_int32=*/true));
  PTERON_CHECK(out.dtype() == repeats.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected repeats' %s", kOp, scalar_type_name(out.dtype()),
               scalar_type_name(repeats.dtype()));
  const int64_t n = repeats.numel();
  const int64_t step = repeats.stride(0);
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = load_index(repeats, i * step);
    PTERON_CHECK(r >= 0, Error::InvalidArgument, "%s: repeats[%lld] is negative (%lld)", kOp,
                 static_cast<long long>(i), static_cast<long long>(r));
    PTERON_CHECK(r <= INT32_MAX - total, Error::InvalidArgument, "%s: repeats sum too large", kOp);
    total += r;
  }
  if (!args[1]->is_none()) {
    PTERON_CHECK(args[1]->i == total, Error::InvalidArgument,
                 "%s: output_size %lld but repeats sum to %lld", kOp,
                 static_cast<long long>(args[1]->i), static_cast<long long>(total));
  }
  const int32_t size = static_cast<int32_t>(total);
  PTERON_TRY(expect_out_shape(kOp, out, &size, 1));
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = load_index(repeats, i * step);
    for (int64_t j = 0; j < r; ++j, ++k) {
      if (out.dtype() == ScalarType::Int)
        out.data<int32_t>()[k] = static_cast<int32_t>(i);
      else
        out.data<int64_t>()[k] = i;
    }
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::repeat_interleave.Tensor_out", repeat_interleave_tensor_out, "TiT");

}  // namespace pteron
