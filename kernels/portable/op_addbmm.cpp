// aten::addbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1,
//                  Tensor(a!) out) -> Tensor(a!)
// out = beta * self + alpha * sum_i batch1[i] @ batch2[i], accumulated as ATen does: the first
// product with beta, each later one added (beta 1). self broadcast to out (not read when beta is
// 0, as torch). Floating and integer dtypes. Not decomposed by run_decompositions().
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::addbmm.out";

Error addbmm_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& a = *args[1]->tensor;
  const Tensor& b = *args[2]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(expect_rank(kOp, "batch1", a, 3));
  PTERON_TRY(expect_rank(kOp, "batch2", b, 3));
  PTERON_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), Error::InvalidArgument,
               "%s: cannot multiply batches %dx%dx%d and %dx%dx%d", kOp, a.size(0), a.size(1),
               a.size(2), b.size(0), b.size(1), b.size(2));
  const Tensor* inputs[] = {&self, &a, &b};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 3));
  const int32_t sizes[] = {a.size(1), b.size(2)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  const double beta = args[3]->scalar_as_double();
  if (beta != 0) {
    PTERON_TRY(broadcast_copy(kOp, self, out));
  } else {
    PTERON_TRY(expect_broadcasts_to(kOp, self, out));
  }
  const int64_t M = a.size(1), N = b.size(2), K = a.size(2), batches = a.size(0);
  if (batches == 0) {
    // No products: out = beta * self (0 when beta is 0).
    dispatch_dtype_in<kRealTypes>(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i)
        o[i] = store_value<T>(beta != 0 ? load_value(o[i]) * beta : 0);
    });
    return Error::Ok;
  }
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < batches; ++i) {
          integer_gemm<T>(M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
                          matrix_view<const T>(b, 1, 2, i * b.stride(0)), matrix_view<T>(out, 0, 1),
                          args[4]->scalar_as_int(), i == 0 ? args[3]->scalar_as_int() : 1);
        }
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, M, N, K);
    for (int64_t i = 0; i < batches; ++i) {
      gemm<T>(ws, M, N, K, matrix_view<const T>(a, 1, 2, i * a.stride(0)),
              matrix_view<const T>(b, 1, 2, i * b.stride(0)), matrix_view<T>(out, 0, 1),
              static_cast<Acc>(args[4]->scalar_as_double()), static_cast<Acc>(i == 0 ? beta : 1.0));
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::addbmm.out", addbmm_out, "TTTSST");

}  // namespace pteron
