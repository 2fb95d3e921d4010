// aten::linalg_solve_triangular.out(Tensor self, Tensor B, *, bool upper, bool left=True,
//     bool unitriangular=False, Tensor(a!) out) -> Tensor(a!)
// X with A X = B (left) or X A = B for triangular A = self (*, n, n), batch dims broadcast, as
// LAPACK's trsm: only A's `upper` or lower triangle is read, its diagonal taken as ones when
// unitriangular; a zero on the diagonal gives infinities or NaN, as torch. float32 / float64.
#include "kernels/portable/util/linalg.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::linalg_solve_triangular.out";

Error solve_triangular_out(KernelContext& ctx, Span<EValue*> args) {
  (void)ctx;
  const Tensor& A = *args[0]->tensor;
  const Tensor& B = *args[1]->tensor;
  const bool upper = args[2]->b, left = args[3]->b, unit = args[4]->b;
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "self", A));
  PTERON_CHECK(B.dim() >= 2, Error::InvalidArgument, "%s: B must have rank >= 2, got %d", kOp,
               B.dim());
  PTERON_TRY(expect_dtype(kOp, B, A.dtype(), "B"));
  PTERON_TRY(expect_dtype(kOp, out, A.dtype(), "out"));
  const int32_t ar = A.dim(), br = B.dim(), orr = out.dim();
  const int64_t n = A.size(ar - 1), rows = B.size(br - 2), cols = B.size(br - 1);
  PTERON_CHECK((left ? rows : cols) == n, Error::InvalidArgument,
               "%s: B has %lld %s, A is %lldx%lld", kOp, static_cast<long long>(left ? rows : cols),
               left ? "rows" : "columns", static_cast<long long>(n), static_cast<long long>(n));
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::broadcast_batch(kOp, B, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, out, batch, rows, cols));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    for (int64_t b = 0; b < batch.count; ++b) {
      MatrixRef<const T> a =
          matrix_view<const T>(A, ar - 2, ar - 1, linalg::batch_offset(A, 2, batch, b));
      MatrixRef<const T> src =
          matrix_view<const T>(B, br - 2, br - 1, linalg::batch_offset(B, 2, batch, b));
      MatrixRef<T> x =
          matrix_view<T>(out, orr - 2, orr - 1, linalg::batch_offset(out, 2, batch, b));
      // X A = B is A^T X^T = B^T, A^T triangular the other way.
      bool a_upper = upper;
      if (!left) {
        a = linalg::transposed(a);
        src = linalg::transposed(src);
        x = linalg::transposed(x);
        a_upper = !upper;
      }
      const int64_t k = left ? cols : rows;
      linalg::copy_matrix(src, x, n, k);
      linalg::triangular_solve(a, a_upper, unit, x, n, k);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::linalg_solve_triangular.out", solve_triangular_out, "TTBBBT");

}  // namespace pteron
