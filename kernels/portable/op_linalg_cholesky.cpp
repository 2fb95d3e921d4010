// aten::linalg_cholesky_ex.L(Tensor self, *, bool upper=False, bool check_errors=False,
//     Tensor(a!) L, Tensor(b!) info) -> (Tensor(a!) L, Tensor(b!) info)
// aten::cholesky.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
// aten::cholesky_solve.out(Tensor self, Tensor input2, bool upper=False, *, Tensor(a!) out)
// aten::cholesky_inverse.out(Tensor self, bool upper=False, *, Tensor(a!) out)
// The Cholesky factor of each symmetric positive-definite matrix of self (*, n, n), as LAPACK's
// potrf: L lower with A = L L^T from A's lower triangle, or (upper) U with A = U^T U from its
// upper triangle; the other triangle zero. info (int32) is 0, or the order of the first leading
// minor that is not positive-definite. check_errors (set by the frontend where the model called
// torch.linalg.cholesky, which raises) fails the call there; torch.cholesky (the older API,
// not decomposed) always fails there. cholesky_solve solves A X = B (self) and cholesky_inverse
// inverts A from its factor input2 / self (L, or U when upper), batch dims broadcast. float32 /
// float64.
#include "kernels/portable/util/linalg.h"

namespace pteron {
namespace {

// The factors of every matrix of A into L (any strides) and their info (when given); fails
// on the first matrix that is not positive-definite when check_errors.
Error factor_all(const char* op, const Tensor& A, bool upper, bool check_errors, Tensor& L,
                 Tensor* info) {
  PTERON_TRY(linalg::expect_square(op, "self", A));
  PTERON_TRY(expect_dtype(op, L, A.dtype(), "out"));
  const int32_t r = A.dim();
  const int64_t n = A.size(r - 1);
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(op, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(op, L, batch, n, n));
  if (info != nullptr) {
    PTERON_TRY(expect_dtype(op, *info, ScalarType::Int, "info"));
    PTERON_TRY(linalg::expect_batched_out(op, *info, batch, -1, -1));
  }
  return linalg::dispatch_real(op, A.dtype(), [&](auto t) {
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
      if (info != nullptr) info->data<int32_t>()[linalg::batch_offset(*info, 0, batch, b)] = status;
      PTERON_CHECK(!check_errors || status == 0, Error::InvalidArgument,
                   "%s: batch element %lld: the matrix is not positive-definite (its leading "
                   "minor of order %d is not)",
                   op, static_cast<long long>(b), status);
    }
    return Error::Ok;
  });
}

Error cholesky_ex_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return factor_all("aten::linalg_cholesky_ex.L", *args[0]->tensor, args[1]->b, args[2]->b,
                    *args[3]->tensor, args[4]->tensor);
}

Error cholesky_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return factor_all("aten::cholesky.out", *args[0]->tensor, args[1]->b, true, *args[2]->tensor,
                    nullptr);
}

// X = A^-1 B for every matrix of B, A given by its factors (batch dims broadcast); B null: the
// identity (A's inverse).
Error solve_all(const char* op, const Tensor* B, const Tensor& factor, bool upper, Tensor& out) {
  PTERON_TRY(linalg::expect_square(op, "the factor", factor));
  PTERON_TRY(expect_dtype(op, out, factor.dtype(), "out"));
  const int32_t fr = factor.dim(), orr = out.dim();
  const int64_t n = factor.size(fr - 1);
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(op, factor, 2, batch));
  int64_t k = n;
  if (B != nullptr) {
    PTERON_TRY(expect_dtype(op, *B, factor.dtype(), "self"));
    PTERON_CHECK(B->dim() >= 2 && B->size(B->dim() - 2) == n, Error::InvalidArgument,
                 "%s: self must be a batch of matrices of %lld rows", op,
                 static_cast<long long>(n));
    PTERON_TRY(linalg::broadcast_batch(op, *B, 2, batch));
    k = B->size(B->dim() - 1);
  }
  PTERON_TRY(linalg::expect_batched_out(op, out, batch, n, k));
  return linalg::dispatch_real(op, factor.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t b = 0; b < batch.count; ++b) {
      MatrixRef<T> x =
          matrix_view<T>(out, orr - 2, orr - 1, linalg::batch_offset(out, 2, batch, b));
      if (B != nullptr) {
        linalg::copy_matrix(matrix_view<const T>(*B, B->dim() - 2, B->dim() - 1,
                                                 linalg::batch_offset(*B, 2, batch, b)),
                            x, n, k);
      } else {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) x.data[i * x.rs + j * x.cs] = i == j ? T(1) : T(0);
      }
      linalg::cholesky_solve(
          matrix_view<const T>(factor, fr - 2, fr - 1, linalg::batch_offset(factor, 2, batch, b)),
          upper, x, n, k);
    }
    return Error::Ok;
  });
}

Error cholesky_solve_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return solve_all("aten::cholesky_solve.out", args[0]->tensor, *args[1]->tensor, args[2]->b,
                   *args[3]->tensor);
}

Error cholesky_inverse_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return solve_all("aten::cholesky_inverse.out", nullptr, *args[0]->tensor, args[1]->b,
                   *args[2]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::linalg_cholesky_ex.L", cholesky_ex_out, "TBBTT");
PTERON_KERNEL("aten::cholesky.out", cholesky_out, "TBT");
PTERON_KERNEL("aten::cholesky_solve.out", cholesky_solve_out, "TTBT");
PTERON_KERNEL("aten::cholesky_inverse.out", cholesky_inverse_out, "TBT");

}  // namespace pteron
