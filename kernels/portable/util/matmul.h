// Shared checks and views for matmul-like kernels (mm, bmm, addmm, baddbmm, linear).
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/gemm.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Tensor dims (row_dim, col_dim) as a matrix starting `offset` elements into the data.
template <typename T>
MatrixRef<T> matrix_view(const Tensor& t, int32_t row_dim, int32_t col_dim, int64_t offset = 0) {
  return {t.data<T>() + offset, t.stride(row_dim), t.stride(col_dim)};
}

// Fails unless `t` has rank `dim` (naming the op and the argument).
Error expect_rank(const char* op, const char* what, const Tensor& t, int32_t dim);

// Fails unless every tensor has out's dtype and that dtype is floating point.
Error expect_float_dtypes(const char* op, const Tensor& out, const Tensor* const* inputs,
                          int count);

// Fails unless every tensor has out's dtype and that dtype is floating point or an integer type
// (torch's CPU mm, bmm, addmm and baddbmm take both; bool they refuse).
Error expect_matmul_dtypes(const char* op, const Tensor& out, const Tensor* const* inputs,
                           int count);

// C (M x N) = alpha * A (M x K) * B (K x N) + beta * C for an integer T, wrapping as torch's CPU
// integer GEMM does (it multiplies and adds in T). beta == 0 does not read C. A plain
// dot-product loop: integer matmuls are rare in inference programs.
template <typename T>
void integer_gemm(int64_t M, int64_t N, int64_t K, MatrixRef<const T> a, MatrixRef<const T> b,
                  MatrixRef<T> c, int64_t alpha, int64_t beta) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        acc = wrapping_add(acc,
                           wrapping_mul(a.data[i * a.rs + k * a.cs], b.data[k * b.rs + j * b.cs]));
      }
      T& dst = c.data[i * c.rs + j * c.cs];
      const T scaled = wrapping_mul(static_cast<T>(alpha), acc);
      dst = beta != 0 ? wrapping_add(scaled, wrapping_mul(static_cast<T>(beta), dst)) : scaled;
    }
  }
}

// Fails unless `bias` broadcasts to out's shape.
Error expect_broadcasts_to(const char* op, const Tensor& bias, const Tensor& out);

// When all dims but the last collapse into one row dimension (any dense default-order tensor,
// not every permuted one), sets its stride and returns true. With a single row (or none) the
// stride is 0.
bool flat_row_stride(const Tensor& t, int64_t* row_stride);

// out = bias broadcast to out's shape (numpy rules), converting to out's dtype; for the
// "beta * self" and bias terms, which the GEMM then accumulates onto.
Error broadcast_copy(const char* op, const Tensor& bias, Tensor& out);

}  // namespace pteron
