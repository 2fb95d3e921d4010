// aten::linalg_solve_triangular.out(Tensor self, Tensor B, *, bool upper, bool left=True,
//     bool unitriangular=False, Tensor(a!) out) -> Tensor(a!)
// aten::triangular_solve.X(Tensor self, Tensor A, bool upper=True, bool transpose=False,
//     bool unitriangular=False, *, Tensor(a!) X, Tensor(b!) M) -> (Tensor(a!), Tensor(b!))
// X with A X = B (left) or X A = B for triangular A = self (*, n, n), batch dims broadcast, as
// LAPACK's trsm: only A's `upper` or lower triangle is read, its diagonal taken as ones when
// unitriangular; a zero on the diagonal gives infinities or NaN, as torch. The older
// triangular_solve (not decomposed) takes B first, solves A X = B or (transpose) A^T X = B, and
// also returns A broadcast to the batch (M). float32 / float64.
#include "kernels/portable/util/linalg.h"

namespace pteron {
namespace {

// X = op(A)^-1 B (left) or B op(A)^-1 for every matrix (batch dims broadcast), op(A) = A^T when
// transpose; M (when given) gets A broadcast to the batch.
Error solve_all(const char* op, const Tensor& A, const Tensor& B, bool upper, bool left,
                bool transpose, bool unit, Tensor& out, Tensor* M) {
  PTERON_TRY(linalg::expect_square(op, "A", A));
  PTERON_CHECK(B.dim() >= 2, Error::InvalidArgument, "%s: B must have rank >= 2, got %d", op,
               B.dim());
  PTERON_TRY(expect_dtype(op, B, A.dtype(), "B"));
  PTERON_TRY(expect_dtype(op, out, A.dtype(), "out"));
  const int32_t ar = A.dim(), br = B.dim(), orr = out.dim();
  const int64_t n = A.size(ar - 1), rows = B.size(br - 2), cols = B.size(br - 1);
  PTERON_CHECK((left ? rows : cols) == n, Error::InvalidArgument,
               "%s: B has %lld %s, A is %lldx%lld", op, static_cast<long long>(left ? rows : cols),
               left ? "rows" : "columns", static_cast<long long>(n), static_cast<long long>(n));
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(op, A, 2, batch));
  PTERON_TRY(linalg::broadcast_batch(op, B, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(op, out, batch, rows, cols));
  if (M != nullptr) {
    PTERON_TRY(expect_dtype(op, *M, A.dtype(), "M"));
    PTERON_TRY(linalg::expect_batched_out(op, *M, batch, n, n));
  }
  return linalg::dispatch_real(op, A.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t b = 0; b < batch.count; ++b) {
      MatrixRef<const T> a =
          matrix_view<const T>(A, ar - 2, ar - 1, linalg::batch_offset(A, 2, batch, b));
      MatrixRef<const T> src =
          matrix_view<const T>(B, br - 2, br - 1, linalg::batch_offset(B, 2, batch, b));
      MatrixRef<T> x =
          matrix_view<T>(out, orr - 2, orr - 1, linalg::batch_offset(out, 2, batch, b));
      if (M != nullptr) {
        linalg::copy_matrix(
            a,
            matrix_view<T>(*M, M->dim() - 2, M->dim() - 1, linalg::batch_offset(*M, 2, batch, b)),
            n, n);
      }
      // A^T is triangular the other way; X A = B is A^T X^T = B^T.
      bool a_upper = upper;
      if (transpose != !left) {
        a = linalg::transposed(a);
        a_upper = !upper;
      }
      if (!left) {
        src = linalg::transposed(src);
        x = linalg::transposed(x);
      }
      const int64_t k = left ? cols : rows;
      linalg::copy_matrix(src, x, n, k);
      linalg::triangular_solve(a, a_upper, unit, x, n, k);
    }
    return Error::Ok;
  });
}

Error solve_triangular_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return solve_all("aten::linalg_solve_triangular.out", *args[0]->tensor, *args[1]->tensor,
                   args[2]->b, args[3]->b, false, args[4]->b, *args[5]->tensor, nullptr);
}

Error triangular_solve_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  return solve_all("aten::triangular_solve.X", *args[1]->tensor, *args[0]->tensor, args[2]->b, true,
                   args[3]->b, args[4]->b, *args[5]->tensor, args[6]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::linalg_solve_triangular.out", solve_triangular_out, "TTBBBT");
PTERON_KERNEL("aten::triangular_solve.X", triangular_solve_out, "TTBBBTT");

}  // namespace pteron
