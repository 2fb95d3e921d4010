// aten::baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1,
//                   Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error baddbmm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::baddbmm.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& a = *args[1]->tensor;
  const Tensor& b = *args[2]->tensor;
  const double beta = args[3]->scalar_as_double();
  const double alpha = args[4]->scalar_as_double();
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(expect_rank(kOp, "batch1", a, 3));
  PTERON_TRY(expect_rank(kOp, "batch2", b, 3));
  if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
    return fail(Error::InvalidArgument, "%s: cannot multiply batches %dx%dx%d and %dx%dx%d", kOp,
                a.size(0), a.size(1), a.size(2), b.size(0), b.size(1), b.size(2));
  }
  const Tensor* inputs[] = {&self, &a, &b};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 3));
  const int32_t sizes[] = {a.size(0), a.size(1), b.size(2)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 3));
  if (beta != 0) {
    PTERON_TRY(broadcast_copy(kOp, self, out));
  } else {
    PTERON_TRY(expect_broadcasts_to(kOp, self, out));
  }
  const int64_t M = a.size(1), N = b.size(2), K = a.size(2);
  // Integer tensors take integer alpha and beta (torch refuses floating-point ones for them).
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < a.size(0); ++i) {
          integer_gemm<T>(M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
                          matrix_view<const T>(b, 1, 2, i * b.stride(0)),
                          matrix_view<T>(out, 1, 2, i * out.stride(0)), args[4]->scalar_as_int(),
                          args[3]->scalar_as_int());
        }
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, M, N, K);
    for (int64_t i = 0; i < a.size(0); ++i) {
      gemm<T>(ws, M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
              matrix_view<const T>(b, 1, 2, i * b.stride(0)),
              matrix_view<T>(out, 1, 2, i * out.stride(0)), static_cast<Acc>(alpha),
              static_cast<Acc>(beta));
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::baddbmm.out", baddbmm_out, "TTTSST");

}  // namespace pteron
