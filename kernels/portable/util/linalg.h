// Dense linear algebra for the linalg kernels (op_linalg_*.cpp): batches of (*, m, n) matrices
// whose batch dims broadcast, LU factorisation with partial pivoting as LAPACK's getrf defines it
// (1-based pivots, info = the first zero pivot), triangular and LU solves, Cholesky. Each works
// in the matrices' own dtype (float or double, as LAPACK's s/d routines) through strided views,
// so a transposed operand is a view with its strides swapped. Small matrices are what models
// carry here (poses, covariances, flows' coupling matrices): plain loops, one matrix at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron::linalg {

template <typename T>
MatrixRef<T> transposed(MatrixRef<T> a) {
  return {a.data, a.cs, a.rs};
}

// The batch dims (all but the last `matrix_dims`) of one or more tensors broadcast together.
struct Batch {
  int32_t sizes[kMaxTensorDim] = {};
  int32_t rank = 0;
  int64_t count = 1;
};

// Broadcasts the batch dims of `t` (all but its last `matrix_dims`) into `batch`; fails naming
// the op when they do not broadcast.
Error broadcast_batch(const char* op, const Tensor& t, int32_t matrix_dims, Batch& batch);

// Element offset in `t` of the matrix of batch `b` (row-major over `batch`, which t's batch
// dims broadcast to).
int64_t batch_offset(const Tensor& t, int32_t matrix_dims, const Batch& batch, int64_t b);

// Fails unless `out` has the shape batch + {rows, cols} (cols < 0: batch + {rows}; rows < 0:
// batch alone).
Error expect_batched_out(const char* op, Tensor& out, const Batch& batch, int64_t rows,
                         int64_t cols);

// Fails unless `t` is (*, n, n).
Error expect_square(const char* op, const char* what, const Tensor& t);

// Calls f(T{}) for a float32 or float64 `dtype`; fails naming the op for any other.
template <typename F>
Error dispatch_real(const char* op, ScalarType dtype, F&& f) {
  if (dtype == ScalarType::Float) return f(float{});
  if (dtype == ScalarType::Double) return f(double{});
  return fail(Error::NotSupported, "%s: dtype %s not supported (float32 and float64 only)", op,
              scalar_type_name(dtype));
}

// Copies an m x n matrix.
template <typename T, typename U>
void copy_matrix(MatrixRef<const U> src, MatrixRef<T> dst, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      dst.data[i * dst.rs + j * dst.cs] = static_cast<T>(src.data[i * src.rs + j * src.cs]);
}

// LU factorisation of the m x n matrix `a` in place with partial pivoting (P A = L U, L unit
// lower, U upper), as LAPACK's getrf: pivot j is the first row of largest magnitude in column j
// at or below the diagonal, piv[j] its 1-based row, rows swapped whole. Returns 0, or j + 1 for
// the first column j whose pivot is zero (the factorisation is still completed).
template <typename T>
int32_t lu_factor(MatrixRef<T> a, int64_t m, int64_t n, int32_t* piv) {
  auto at = [&](int64_t i, int64_t j) -> T& { return a.data[i * a.rs + j * a.cs]; };
  int32_t info = 0;
  const int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    T best = std::abs(at(j, j));
    for (int64_t i = j + 1; i < m; ++i) {
      if (std::abs(at(i, j)) > best) {
        best = std::abs(at(i, j));
        p = i;
      }
    }
    piv[j] = static_cast<int32_t>(p + 1);
    if (at(p, j) != T(0)) {
      if (p != j)
        for (int64_t c = 0; c < n; ++c) std::swap(at(j, c), at(p, c));
      const T pivot = at(j, j);
      for (int64_t i = j + 1; i < m; ++i) at(i, j) /= pivot;
    } else if (info == 0) {
      info = static_cast<int32_t>(j + 1);
    }
    for (int64_t i = j + 1; i < m; ++i) {
      const T l = at(i, j);
      for (int64_t c = j + 1; c < n; ++c) at(i, c) -= l * at(j, c);
    }
  }
  return info;
}

// Solves A X = B in place in `x` (n x k) for a triangular n x n `a` (its other triangle not
// read; `unit`: its diagonal taken as ones).
template <typename T>
void triangular_solve(MatrixRef<const T> a, bool upper, bool unit, MatrixRef<T> x, int64_t n,
                      int64_t k) {
  auto A = [&](int64_t i, int64_t j) { return a.data[i * a.rs + j * a.cs]; };
  auto X = [&](int64_t i, int64_t j) -> T& { return x.data[i * x.rs + j * x.cs]; };
  for (int64_t step = 0; step < n; ++step) {
    const int64_t i = upper ? n - 1 - step : step;
    const int64_t lo = upper ? i + 1 : 0, hi = upper ? n : i;
    for (int64_t c = 0; c < k; ++c) {
      T v = X(i, c);
      for (int64_t r = lo; r < hi; ++r) v -= A(i, r) * X(r, c);
      X(i, c) = unit ? v : v / A(i, i);
    }
  }
}

// Solves A X = B (adjoint: A^T X = B) in place in `x` (n x k) from A's LU factors and pivots.
template <typename T>
void lu_solve(MatrixRef<const T> lu, const int32_t* piv, bool adjoint, MatrixRef<T> x, int64_t n,
              int64_t k) {
  auto swap_rows = [&](int64_t j) {
    const int64_t p = piv[j] - 1;
    if (p == j) return;
    for (int64_t c = 0; c < k; ++c)
      std::swap(x.data[j * x.rs + c * x.cs], x.data[p * x.rs + c * x.cs]);
  };
  if (!adjoint) {  // L U X = P B
    for (int64_t j = 0; j < n; ++j) swap_rows(j);
    triangular_solve(lu, false, true, x, n, k);
    triangular_solve(lu, true, false, x, n, k);
  } else {  // U^T L^T P^T X = B
    triangular_solve(transposed(lu), false, false, x, n, k);
    triangular_solve(transposed(lu), true, true, x, n, k);
    for (int64_t j = n - 1; j >= 0; --j) swap_rows(j);
  }
}

// Solves A X = B in place in `x` (n x k) from A's Cholesky factor: L with A = L L^T, or
// (upper) U with A = U^T U.
template <typename T>
void cholesky_solve(MatrixRef<const T> factor, bool upper, MatrixRef<T> x, int64_t n, int64_t k) {
  const MatrixRef<const T> lower = upper ? transposed(factor) : factor;
  triangular_solve(lower, false, false, x, n, k);
  triangular_solve(transposed(lower), true, false, x, n, k);
}

// Cholesky factor L (A = L L^T) of the n x n `a` from its lower triangle, into the lower triangle
// of `l` (its upper triangle zeroed). Returns 0, or j + 1 when the leading minor of order j + 1
// is not positive-definite (LAPACK's potrf: the factorisation stops there).
template <typename T>
int32_t cholesky(MatrixRef<const T> a, MatrixRef<T> l, int64_t n) {
  auto L = [&](int64_t i, int64_t j) -> T& { return l.data[i * l.rs + j * l.cs]; };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) L(i, j) = j <= i ? a.data[i * a.rs + j * a.cs] : T(0);
  for (int64_t j = 0; j < n; ++j) {
    T d = L(j, j);
    for (int64_t c = 0; c < j; ++c) d -= L(j, c) * L(j, c);
    if (!(d > T(0))) return static_cast<int32_t>(j + 1);  // NaN too
    d = std::sqrt(d);
    L(j, j) = d;
    for (int64_t i = j + 1; i < n; ++i) {
      T v = L(i, j);
      for (int64_t c = 0; c < j; ++c) v -= L(i, c) * L(j, c);
      L(i, j) = v / d;
    }
  }
  return 0;
}

}  // namespace pteron::linalg
