// aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error bmm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::bmm.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_rank(kOp, "self", a, 3));
  PTERON_TRY(expect_rank(kOp, "mat2", b, 3));
  if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
    return fail(Error::InvalidArgument, "%s: cannot multiply batches %dx%dx%d and %dx%dx%d", kOp,
                a.size(0), a.size(1), a.size(2), b.size(0), b.size(1), b.size(2));
  }
  const Tensor* inputs[] = {&a, &b};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 2));
  const int32_t sizes[] = {a.size(0), a.size(1), b.size(2)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 3));
  const int64_t M = a.size(1), N = b.size(2), K = a.size(2);
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < a.size(0); ++i) {
          integer_gemm<T>(M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
                          matrix_view<const T>(b, 1, 2, i * b.stride(0)),
                          matrix_view<T>(out, 1, 2, i * out.stride(0)), 1, 0);
        }
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, M, N, K);
    for (int64_t i = 0; i < a.size(0); ++i) {
      gemm<T>(ws, M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
              matrix_view<const T>(b, 1, 2, i * b.stride(0)),
              matrix_view<T>(out, 1, 2, i * out.stride(0)), 1, 0);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::bmm.out", bmm_out, "TTT");

}  // namespace pteron
