// aten::linalg_cholesky_ex.L(Tensor self, *, bool upper=False, bool check_errors=False,
//     Tensor(a!) L, Tensor(b!) info) -> (Tensor(a!) L, Tensor(b!) info)
// The Cholesky factor of each symmetric positive-definite matrix of self (*, n, n), as LAPACK's
// potrf: L lower with A = L L^T from A's lower triangle, or (upper) U with A = U^T U from its
// upper triangle; the other triangle zero. info (int32) is 0, or the order of the first leading
// minor that is not positive-definite. check_errors (set by the frontend where the model called
// torch.linalg.cholesky, which raises) fails the call there. float32 / float64.
#include "kernels/portable/util/linalg.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::linalg_cholesky_ex.L";

Error cholesky_ex_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  const Tensor& A = *args[0]->tensor;
  const bool upper = args[1]->b, check_errors = args[2]->b;
  Tensor& L = *args[3]->tensor;
  Tensor& info = *args[4]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "self", A));
  PTERON_TRY(expect_dtype(kOp, L, A.dtype(), "L"));
  PTERON_TRY(expect_dtype(kOp, info, ScalarType::Int, "info"));
  const int32_t r = A.dim();
  const int64_t n = A.size(r - 1);
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, L, batch, n, n));
  PTERON_TRY(linalg::expect_batched_out(kOp, info, batch, -1, -1));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t b = 0; b < batch.count; ++b) {
      MatrixRef<const T> a =
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b));
      MatrixRef<T> l = matrix_view<T>(L, r - 2, r - 1, linalg::batch_offset(L, 2, batch, b));
      // U = L^T of A^T, whose lower triangle is A's upper one.
      if (upper) {
        a = linalg::transposed(a);
        l = linalg::transposed(l);
      }
      const int32_t status = linalg::cholesky(a, l, n);
      info.data<int32_t>()[linalg::batch_offset(info, 0, batch, b)] = status;
      PTERON_CHECK(!check_errors || status == 0, Error::InvalidArgument,
                   "%s: batch element %lld: the matrix is not positive-definite (its leading "
                   "minor of order %d is not)",
                   kOp, static_cast<long long>(b), status);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::linalg_cholesky_ex.L", cholesky_ex_out, "TBBTT");

}  // namespace pteron
