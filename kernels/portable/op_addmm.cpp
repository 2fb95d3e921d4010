// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
//                 Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error addmm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::addmm.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& a = *args[1]->tensor;
  const Tensor& b = *args[2]->tensor;
  const double beta = args[3]->scalar_as_double();
  const double alpha = args[4]->scalar_as_double();
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(expect_rank(kOp, "mat1", a, 2));
  PTERON_TRY(expect_rank(kOp, "mat2", b, 2));
  if (a.size(1) != b.size(0)) {
    return fail(Error::InvalidArgument, "%s: cannot multiply %dx%d by %dx%d", kOp, a.size(0),
                a.size(1), b.size(0), b.size(1));
  }
  const Tensor* inputs[] = {&self, &a, &b};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 3));
  const int32_t sizes[] = {a.size(0), b.size(1)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  // beta == 0 ignores self entirely (NaNs in it do not propagate), as torch does.
  if (beta != 0) {
    PTERON_TRY(broadcast_copy(kOp, self, out));
  } else {
    PTERON_TRY(expect_broadcasts_to(kOp, self, out));
  }
  // Integer tensors take integer alpha and beta (torch refuses floating-point ones for them).
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        integer_gemm<T>(a.size(0), b.size(1), a.size(1), matrix_view<const T>(a, 0, 1),
                        matrix_view<const T>(b, 0, 1), matrix_view<T>(out, 0, 1),
                        args[4]->scalar_as_int(), args[3]->scalar_as_int());
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    gemm<T>(ctx, a.size(0), b.size(1), a.size(1), matrix_view<const T>(a, 0, 1),
            matrix_view<const T>(b, 0, 1), matrix_view<T>(out, 0, 1), static_cast<Acc>(alpha),
            static_cast<Acc>(beta));
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::addmm.out", addmm_out, "TTTSST");

}  // namespace pteron
