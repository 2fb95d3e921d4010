// LU-based linear algebra, as torch.linalg computes it on the CPU (LAPACK getrf / getrs):
//   aten::linalg_lu_factor_ex.out(Tensor A, *, bool pivot=True, bool check_errors=False,
//       Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info)
//   aten::linalg_lu_solve.out(Tensor LU, Tensor pivots, Tensor B, *, bool left=True,
//       bool adjoint=False, Tensor(a!) out)
//   aten::_linalg_solve_ex.result(Tensor A, Tensor B, *, bool left=True, bool check_errors=False,
//       Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots, Tensor(d!) info)
//   aten::linalg_inv_ex.inverse(Tensor A, *, bool check_errors=False, Tensor(a!) inverse,
//       Tensor(b!) info)
//   aten::_linalg_det.result(Tensor A, *, Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots)
//   aten::_linalg_slogdet.sign(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet,
//       Tensor(c!) LU, Tensor(d!) pivots)
// det and slogdet's LU and pivots are A's factors (torch may factor A^T there: those outputs
// serve its autograd, torch.linalg.det and slogdet do not return them).
// float32 / float64; batch dims broadcast where torch broadcasts them (the solves); pivots and
// info int32, 1-based pivots as LAPACK's. check_errors (set by the frontend where the model
// called torch.linalg.inv, solve or lu_factor, which raise) fails the call on a singular matrix,
// naming the batch element and the zero pivot; without it the results are what the arithmetic
// gives (infinities, NaN), as torch's *_ex ops return them.
#include <cmath>

#include "kernels/portable/util/linalg.h"

namespace pteron {
namespace {

using linalg::Batch;

// The LU factors of every matrix of A (*, m, n) into LU (any strides), their pivots and info.
// Fails on the first singular matrix when check_errors.
template <typename T>
Error factor_all(const char* op, KernelContext& ctx, const Tensor& A, Tensor& LU, Tensor& pivots,
                 Tensor* info, bool check_errors) {
  const int32_t r = A.dim();
  const int64_t m = A.size(r - 2), n = A.size(r - 1), k = m < n ? m : n;
  Batch batch;
  PTERON_TRY(linalg::broadcast_batch(op, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(op, LU, batch, m, n));
  PTERON_TRY(linalg::expect_batched_out(op, pivots, batch, k, -1));
  PTERON_TRY(expect_dtype(op, pivots, ScalarType::Int, "pivots"));
  if (info != nullptr) {
    PTERON_TRY(linalg::expect_batched_out(op, *info, batch, -1, -1));
    PTERON_TRY(expect_dtype(op, *info, ScalarType::Int, "info"));
  }
  auto* piv = static_cast<int32_t*>(ctx.allocate_scratch(sizeof(int32_t) * (k > 0 ? k : 1), 4));
  PTERON_CHECK(piv != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld pivots", op,
               static_cast<long long>(k));
  for (int64_t b = 0; b < batch.count; ++b) {
    MatrixRef<T> lu = matrix_view<T>(LU, r - 2, r - 1, linalg::batch_offset(LU, 2, batch, b));
    linalg::copy_matrix(matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b)),
                        lu, m, n);
    const int32_t status = linalg::lu_factor(lu, m, n, piv);
    int32_t* p = pivots.data<int32_t>() + linalg::batch_offset(pivots, 1, batch, b);
    for (int64_t j = 0; j < k; ++j) p[j * pivots.stride(pivots.dim() - 1)] = piv[j];
    if (info != nullptr) info->data<int32_t>()[linalg::batch_offset(*info, 0, batch, b)] = status;
    PTERON_CHECK(!check_errors || status == 0, Error::InvalidArgument,
                 "%s: batch element %lld: the matrix is singular (U[%d,%d] is zero)", op,
                 static_cast<long long>(b), status - 1, status - 1);
  }
  return Error::Ok;
}

// Solves every system of B against LU factors (batch dims broadcast): X = A^-1 B (left),
// B A^-1 (right), with A^T for adjoint. b_dims 1: B and out are batches of vectors.
template <typename T>
Error solve_all(const char* op, KernelContext& ctx, const Tensor& LU, const Tensor& pivots,
                const Tensor& B, int32_t b_dims, bool left, bool adjoint, Tensor& out) {
  const int32_t r = LU.dim();
  const int64_t n = LU.size(r - 1);
  Batch batch;
  PTERON_TRY(linalg::broadcast_batch(op, LU, 2, batch));
  PTERON_TRY(linalg::broadcast_batch(op, pivots, 1, batch));
  PTERON_TRY(linalg::broadcast_batch(op, B, b_dims, batch));
  const int32_t br = B.dim();
  // X as n x k columns: B itself (left), its transpose (right); a vector is one column.
  const int64_t rows = b_dims == 1 ? B.size(br - 1) : B.size(br - 2);
  const int64_t cols = b_dims == 1 ? -1 : B.size(br - 1);
  const int64_t k = b_dims == 1 ? 1 : (left ? cols : rows);
  PTERON_CHECK((b_dims == 1 || left ? rows : cols) == n, Error::InvalidArgument,
               "%s: B has %lld %s, the matrices are %lldx%lld", op,
               static_cast<long long>(b_dims == 1 || left ? rows : cols),
               b_dims == 1 || left ? "rows" : "columns", static_cast<long long>(n),
               static_cast<long long>(n));
  PTERON_TRY(linalg::expect_batched_out(op, out, batch, rows, cols));
  auto* piv = static_cast<int32_t*>(ctx.allocate_scratch(sizeof(int32_t) * (n > 0 ? n : 1), 4));
  PTERON_CHECK(piv != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld pivots", op,
               static_cast<long long>(n));
  const int32_t orr = out.dim();
  for (int64_t b = 0; b < batch.count; ++b) {
    const int64_t bo = linalg::batch_offset(B, b_dims, batch, b);
    const int64_t oo = linalg::batch_offset(out, b_dims, batch, b);
    MatrixRef<const T> src = b_dims == 1
                                 ? MatrixRef<const T>{B.data<const T>() + bo, B.stride(br - 1), 0}
                                 : matrix_view<const T>(B, br - 2, br - 1, bo);
    MatrixRef<T> x = b_dims == 1 ? MatrixRef<T>{out.data<T>() + oo, out.stride(orr - 1), 0}
                                 : matrix_view<T>(out, orr - 2, orr - 1, oo);
    if (b_dims == 2 && !left) {
      src = linalg::transposed(src);
      x = linalg::transposed(x);
    }
    linalg::copy_matrix(src, x, n, k);
    const int32_t* p = pivots.data<const int32_t>() + linalg::batch_offset(pivots, 1, batch, b);
    for (int64_t j = 0; j < n; ++j) {
      piv[j] = p[j * pivots.stride(pivots.dim() - 1)];
      PTERON_CHECK(piv[j] >= 1 && piv[j] <= n, Error::InvalidArgument,
                   "%s: pivot %d out of range 1..%lld", op, piv[j], static_cast<long long>(n));
    }
    // X A = B is A^T X^T = B^T: the right side flips adjoint.
    linalg::lu_solve(matrix_view<const T>(LU, r - 2, r - 1, linalg::batch_offset(LU, 2, batch, b)),
                     piv, adjoint != !left, x, n, k);
  }
  return Error::Ok;
}

Error lu_factor_ex_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::linalg_lu_factor_ex.out";
  const Tensor& A = *args[0]->tensor;
  PTERON_CHECK(args[1]->b, Error::NotSupported,
               "%s: LU without pivoting is not implemented on the CPU (as in torch)", kOp);
  Tensor& LU = *args[3]->tensor;
  PTERON_CHECK(A.dim() >= 2, Error::InvalidArgument, "%s: A must have rank >= 2, got %d", kOp,
               A.dim());
  PTERON_TRY(expect_dtype(kOp, LU, A.dtype(), "LU"));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    return factor_all<decltype(t)>(kOp, ctx, A, LU, *args[4]->tensor, args[5]->tensor, args[2]->b);
  });
}

Error lu_solve_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::linalg_lu_solve.out";
  const Tensor& LU = *args[0]->tensor;
  const Tensor& pivots = *args[1]->tensor;
  const Tensor& B = *args[2]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "LU", LU));
  PTERON_TRY(expect_dtype(kOp, pivots, ScalarType::Int, "pivots"));
  PTERON_CHECK(pivots.dim() >= 1 && pivots.size(pivots.dim() - 1) == LU.size(LU.dim() - 1),
               Error::InvalidArgument, "%s: pivots must have one entry per row of LU", kOp);
  PTERON_CHECK(B.dim() >= 2, Error::InvalidArgument, "%s: B must have rank >= 2, got %d", kOp,
               B.dim());
  PTERON_TRY(expect_dtype(kOp, B, LU.dtype(), "B"));
  PTERON_TRY(expect_dtype(kOp, out, LU.dtype(), "out"));
  return linalg::dispatch_real(kOp, LU.dtype(), [&](auto t) {
    return solve_all<decltype(t)>(kOp, ctx, LU, pivots, B, 2, args[3]->b, args[4]->b, out);
  });
}

Error solve_ex_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_linalg_solve_ex.result";
  const Tensor& A = *args[0]->tensor;
  const Tensor& B = *args[1]->tensor;
  const bool left = args[2]->b, check_errors = args[3]->b;
  Tensor& result = *args[4]->tensor;
  Tensor& LU = *args[5]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "A", A));
  PTERON_TRY(expect_dtype(kOp, B, A.dtype(), "B"));
  PTERON_TRY(expect_dtype(kOp, result, A.dtype(), "result"));
  PTERON_TRY(expect_dtype(kOp, LU, A.dtype(), "LU"));
  // torch's vector case: B (n) or B of A's shape without the last dim is a batch of vectors.
  bool vector = B.dim() == 1;
  if (B.dim() == A.dim() - 1) {
    vector = true;
    for (int32_t d = 0; d < B.dim(); ++d) vector = vector && B.size(d) == A.size(d);
  }
  PTERON_CHECK(vector || B.dim() >= 2, Error::InvalidArgument,
               "%s: B must be a vector or a batch of matrices", kOp);
  PTERON_CHECK(!vector || left, Error::InvalidArgument,
               "%s: a vector B is solved from the left only (as in torch)", kOp);
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    PTERON_TRY(factor_all<T>(kOp, ctx, A, LU, *args[6]->tensor, args[7]->tensor, check_errors));
    return solve_all<T>(kOp, ctx, LU, *args[6]->tensor, B, vector ? 1 : 2, left, false, result);
  });
}

Error inv_ex_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::linalg_inv_ex.inverse";
  const Tensor& A = *args[0]->tensor;
  const bool check_errors = args[1]->b;
  Tensor& inverse = *args[2]->tensor;
  Tensor& info = *args[3]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "A", A));
  PTERON_TRY(expect_dtype(kOp, inverse, A.dtype(), "inverse"));
  PTERON_TRY(expect_dtype(kOp, info, ScalarType::Int, "info"));
  const int32_t r = A.dim();
  const int64_t n = A.size(r - 1);
  Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, inverse, batch, n, n));
  PTERON_TRY(linalg::expect_batched_out(kOp, info, batch, -1, -1));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    auto* lu = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * (n > 0 ? n * n : 1), alignof(T)));
    auto* piv = static_cast<int32_t*>(ctx.allocate_scratch(sizeof(int32_t) * (n > 0 ? n : 1), 4));
    PTERON_CHECK(lu != nullptr && piv != nullptr, Error::OutOfMemory,
                 "%s: no scratch memory for a %lldx%lld factorisation", kOp,
                 static_cast<long long>(n), static_cast<long long>(n));
    const MatrixRef<T> factors{lu, n, 1};
    for (int64_t b = 0; b < batch.count; ++b) {
      linalg::copy_matrix(
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b)), factors, n,
          n);
      const int32_t status = linalg::lu_factor(factors, n, n, piv);
      info.data<int32_t>()[linalg::batch_offset(info, 0, batch, b)] = status;
      PTERON_CHECK(!check_errors || status == 0, Error::InvalidArgument,
                   "%s: batch element %lld: the matrix is singular (U[%d,%d] is zero), it has no "
                   "inverse",
                   kOp, static_cast<long long>(b), status - 1, status - 1);
      MatrixRef<T> x =
          matrix_view<T>(inverse, r - 2, r - 1, linalg::batch_offset(inverse, 2, batch, b));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) x.data[i * x.rs + j * x.cs] = i == j ? T(1) : T(0);
      linalg::lu_solve(MatrixRef<const T>{lu, n, 1}, piv, false, x, n, n);
    }
    return Error::Ok;
  });
}

// det = (-1)^swaps * prod(diag U); slogdet: its sign and log |det| (sign 0 and log |det| -inf
// when singular, as torch).
template <typename T>
void determinant(const Tensor& LU, const Tensor& pivots, const Batch& batch, int64_t b, T* sign,
                 T* logabs, T* det) {
  const int32_t r = LU.dim();
  const int64_t n = LU.size(r - 1);
  const MatrixRef<const T> lu =
      matrix_view<const T>(LU, r - 2, r - 1, linalg::batch_offset(LU, 2, batch, b));
  const int32_t* p = pivots.data<const int32_t>() + linalg::batch_offset(pivots, 1, batch, b);
  T permutation = T(1), diagonal_sign = T(1), product = T(1), log_sum = T(0);
  for (int64_t j = 0; j < n; ++j) {
    const T u = lu.data[j * lu.rs + j * lu.cs];
    if (p[j * pivots.stride(pivots.dim() - 1)] != j + 1) permutation = -permutation;
    product *= u;
    diagonal_sign *= u > T(0) ? T(1) : u < T(0) ? T(-1) : T(0);
    log_sum += std::log(std::abs(u));
  }
  if (det != nullptr) *det = permutation * product;
  if (sign != nullptr) *sign = permutation * diagonal_sign;
  if (logabs != nullptr) *logabs = log_sum;
}

Error det_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_linalg_det.result";
  const Tensor& A = *args[0]->tensor;
  Tensor& result = *args[1]->tensor;
  Tensor& LU = *args[2]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "A", A));
  PTERON_TRY(expect_dtype(kOp, result, A.dtype(), "result"));
  PTERON_TRY(expect_dtype(kOp, LU, A.dtype(), "LU"));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    PTERON_TRY(factor_all<T>(kOp, ctx, A, LU, *args[3]->tensor, nullptr, false));
    Batch batch;
    PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
    PTERON_TRY(linalg::expect_batched_out(kOp, result, batch, -1, -1));
    for (int64_t b = 0; b < batch.count; ++b) {
      determinant<T>(LU, *args[3]->tensor, batch, b, nullptr, nullptr,
                     result.data<T>() + linalg::batch_offset(result, 0, batch, b));
    }
    return Error::Ok;
  });
}

Error slogdet_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_linalg_slogdet.sign";
  const Tensor& A = *args[0]->tensor;
  Tensor& sign = *args[1]->tensor;
  Tensor& logabsdet = *args[2]->tensor;
  Tensor& LU = *args[3]->tensor;
  PTERON_TRY(linalg::expect_square(kOp, "A", A));
  PTERON_TRY(expect_dtype(kOp, sign, A.dtype(), "sign"));
  PTERON_TRY(expect_dtype(kOp, logabsdet, A.dtype(), "logabsdet"));
  PTERON_TRY(expect_dtype(kOp, LU, A.dtype(), "LU"));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    PTERON_TRY(factor_all<T>(kOp, ctx, A, LU, *args[4]->tensor, nullptr, false));
    Batch batch;
    PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
    PTERON_TRY(linalg::expect_batched_out(kOp, sign, batch, -1, -1));
    PTERON_TRY(linalg::expect_batched_out(kOp, logabsdet, batch, -1, -1));
    for (int64_t b = 0; b < batch.count; ++b) {
      determinant<T>(LU, *args[4]->tensor, batch, b,
                     sign.data<T>() + linalg::batch_offset(sign, 0, batch, b),
                     logabsdet.data<T>() + linalg::batch_offset(logabsdet, 0, batch, b), nullptr);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::linalg_lu_factor_ex.out", lu_factor_ex_out, "TBBTTT");
PTERON_KERNEL("aten::linalg_lu_solve.out", lu_solve_out, "TTTBBT");
PTERON_KERNEL("aten::_linalg_solve_ex.result", solve_ex_out, "TTBBTTTT");
PTERON_KERNEL("aten::linalg_inv_ex.inverse", inv_ex_out, "TBTT");
PTERON_KERNEL("aten::_linalg_det.result", det_out, "TTTT");
PTERON_KERNEL("aten::_linalg_slogdet.sign", slogdet_out, "TTTTT");

}  // namespace pteron
