// aten::_linalg_eigh.eigenvalues(Tensor A, str UPLO='L', bool compute_v=True, *,
//     Tensor(a!) eigenvalues, Tensor(b!) eigenvectors) -> (Tensor(a!), Tensor(b!))
// The eigen-decomposition A = V diag(w) V^T of each symmetric matrix of A (*, n, n), read from
// the triangle UPLO names ('L' or 'U', either case, as torch), by cyclic Jacobi rotations
// (util/linalg_decompositions.h): eigenvalues (*, n) ascending as LAPACK's syevd, eigenvectors
// (*, n, n) orthonormal columns (each column's sign as arbitrary as LAPACK's), or an empty (0,)
// tensor when compute_v is false (torch.linalg.eigvalsh). A matrix whose triangle holds a NaN or
// Inf gets NaN eigenvalues and eigenvectors. float32 / float64, in the matrix dtype.
#include <limits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/linalg_decompositions.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_linalg_eigh.eigenvalues";

Error eigh_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& A = *args[0]->tensor;
  const EValue& uplo = *args[1];
  const bool compute_v = args[2]->b;
  Tensor& values = *args[3]->tensor;
  Tensor& vectors = *args[4]->tensor;
  PTERON_TRY(check_string_arg(kOp, uplo, 1, false));
  const bool upper = string_equals(uplo, "U") || string_equals(uplo, "u");
  PTERON_CHECK(upper || string_equals(uplo, "L") || string_equals(uplo, "l"),
               Error::InvalidArgument, "%s: UPLO must be 'L' or 'U', got '%.*s'", kOp,
               static_cast<int>(uplo.string.size()), uplo.string.data());
  PTERON_TRY(linalg::expect_square(kOp, "A", A));
  PTERON_TRY(expect_dtype(kOp, values, A.dtype(), "eigenvalues"));
  PTERON_TRY(expect_dtype(kOp, vectors, A.dtype(), "eigenvectors"));
  const int32_t r = A.dim();
  const int64_t n = A.size(r - 1);
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, values, batch, n, -1));
  if (compute_v) {
    PTERON_TRY(linalg::expect_batched_out(kOp, vectors, batch, n, n));
  } else {
    PTERON_CHECK(vectors.numel() == 0, Error::InvalidArgument,
                 "%s: eigenvectors must be empty when compute_v is false", kOp);
  }
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    const int64_t size = n > 0 ? n : 1;
    auto* work = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * size * size, alignof(T)));
    auto* w = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * size, alignof(T)));
    auto* order =
        static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * size, alignof(int64_t)));
    PTERON_CHECK(work != nullptr && w != nullptr && order != nullptr, Error::OutOfMemory,
                 "%s: no scratch memory for a %lldx%lld eigen-decomposition", kOp,
                 static_cast<long long>(n), static_cast<long long>(n));
    const int32_t vr = values.dim();
    for (int64_t b = 0; b < batch.count; ++b) {
      MatrixRef<const T> a =
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b));
      // The upper triangle of A is the lower one of A^T.
      if (upper) a = linalg::transposed(a);
      MatrixRef<T> v{nullptr, 0, 0};
      if (compute_v)
        v = matrix_view<T>(vectors, r - 2, r - 1, linalg::batch_offset(vectors, 2, batch, b));
      bool finite = true;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j)
          finite = finite && std::isfinite(a.data[i * a.rs + j * a.cs]);
      if (finite) {
        linalg::symmetric_eigen(a, n, w, v, compute_v, work, order);
      } else {
        const T nan = std::numeric_limits<T>::quiet_NaN();
        for (int64_t i = 0; i < n; ++i) {
          w[i] = nan;
          for (int64_t j = 0; compute_v && j < n; ++j) v.data[i * v.rs + j * v.cs] = nan;
        }
      }
      T* out = values.data<T>() + linalg::batch_offset(values, 1, batch, b);
      for (int64_t i = 0; i < n; ++i) out[i * values.stride(vr - 1)] = w[i];
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::_linalg_eigh.eigenvalues", eigh_out, "T*BTT");

}  // namespace pteron
