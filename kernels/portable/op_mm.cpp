// aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error mm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mm.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_rank(kOp, "self", a, 2));
  PTERON_TRY(expect_rank(kOp, "mat2", b, 2));
  if (a.size(1) != b.size(0)) {
    return fail(Error::InvalidArgument, "%s: cannot multiply %dx%d by %dx%d", kOp, a.size(0),
                a.size(1), b.size(0), b.size(1));
  }
  const Tensor* inputs[] = {&a, &b};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 2));
  const int32_t sizes[] = {a.size(0), b.size(1)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        integer_gemm<T>(a.size(0), b.size(1), a.size(1), matrix_view<const T>(a, 0, 1),
                        matrix_view<const T>(b, 0, 1), matrix_view<T>(out, 0, 1), 1, 0);
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemm<T>(ctx, a.size(0), b.size(1), a.size(1), matrix_view<const T>(a, 0, 1),
            matrix_view<const T>(b, 0, 1), matrix_view<T>(out, 0, 1), 1, 0);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::mm.out", mm_out, "TTT");

}  // namespace pteron
