// aten::_linalg_svd.U(Tensor A, bool full_matrices=False, bool compute_uv=True, *,
//     str? driver=None, Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh) -> (Tensor(a!), Tensor(b!),
//     Tensor(c!))
// The SVD A = U diag(S) Vh of each matrix of A (*, m, n), k = min(m, n), by one-sided Jacobi
// (util/linalg_decompositions.h) on A's columns (m >= n) or on A^T's (m < n): S (*, k)
// descending; U (*, m, k) and Vh (*, k, n), or with full_matrices U (*, m, m) and Vh (*, n, n)
// completed to orthonormal bases; each singular pair's sign as arbitrary as LAPACK's gesdd.
// compute_uv false (torch.linalg.svdvals): U and Vh empty (0,) tensors, as torch. driver is
// cuSOLVER's choice, which torch refuses on the CPU: it must be None. A matrix holding a NaN or
// Inf gets NaN outputs. float32 / float64, in the matrix dtype.
#include <limits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/linalg_decompositions.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_linalg_svd.U";

template <typename T>
void fill_nan(MatrixRef<T> x, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      x.data[i * x.rs + j * x.cs] = std::numeric_limits<T>::quiet_NaN();
}

Error svd_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& A = *args[0]->tensor;
  const bool full = args[1]->b;
  const bool compute_uv = args[2]->b;
  Tensor& U = *args[4]->tensor;
  Tensor& S = *args[5]->tensor;
  Tensor& Vh = *args[6]->tensor;
  PTERON_CHECK(args[3]->tag == Tag::None, Error::NotSupported,
               "%s: driver= is for CUDA inputs only (torch refuses it on the CPU)", kOp);
  PTERON_CHECK(A.dim() >= 2, Error::InvalidArgument,
               "%s: A must be a batch of matrices (*, m, n), got %d dims", kOp, A.dim());
  PTERON_TRY(expect_dtype(kOp, S, A.dtype(), "S"));
  PTERON_TRY(expect_dtype(kOp, U, A.dtype(), "U"));
  PTERON_TRY(expect_dtype(kOp, Vh, A.dtype(), "Vh"));
  const int32_t r = A.dim();
  const int64_t m = A.size(r - 2), n = A.size(r - 1);
  const int64_t k = m < n ? m : n, big = m < n ? n : m;
  const int64_t u_cols = full ? m : k, vh_rows = full ? n : k;
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, S, batch, k, -1));
  if (compute_uv) {
    PTERON_TRY(linalg::expect_batched_out(kOp, U, batch, m, u_cols));
    PTERON_TRY(linalg::expect_batched_out(kOp, Vh, batch, vh_rows, n));
  } else {
    PTERON_CHECK(U.numel() == 0 && Vh.numel() == 0, Error::InvalidArgument,
                 "%s: U and Vh must be empty when compute_uv is false", kOp);
  }
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    const int64_t size = k > 0 ? k : 1;
    auto* work =
        static_cast<T*>(ctx.allocate_scratch(sizeof(T) * (big > 0 ? big : 1) * size, alignof(T)));
    auto* s = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * size, alignof(T)));
    auto* norms = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * size, alignof(T)));
    auto* order =
        static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * size, alignof(int64_t)));
    PTERON_CHECK(work != nullptr && s != nullptr && norms != nullptr && order != nullptr,
                 Error::OutOfMemory, "%s: no scratch memory for a %lldx%lld SVD", kOp,
                 static_cast<long long>(m), static_cast<long long>(n));
    const int32_t sr = S.dim();
    for (int64_t b = 0; b < batch.count; ++b) {
      const MatrixRef<const T> a =
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b));
      MatrixRef<T> u{nullptr, 0, 0}, vh{nullptr, 0, 0};
      if (compute_uv) {
        u = matrix_view<T>(U, r - 2, r - 1, linalg::batch_offset(U, 2, batch, b));
        vh = matrix_view<T>(Vh, r - 2, r - 1, linalg::batch_offset(Vh, 2, batch, b));
      }
      if (!linalg::all_finite(a, m, n)) {
        for (int64_t i = 0; i < k; ++i) s[i] = std::numeric_limits<T>::quiet_NaN();
        if (compute_uv) {
          fill_nan(u, m, u_cols);
          fill_nan(vh, vh_rows, n);
        }
      } else if (m >= n) {
        // A = L diag(s) R^T with L = U (m x u_cols) and R = Vh^T (n x n).
        linalg::jacobi_svd(a, m, n, s, compute_uv, u, u_cols, linalg::transposed(vh), work, norms,
                           order);
      } else {
        // A^T = L diag(s) R^T with L = Vh^T (n x vh_rows) and R = U (m x m).
        linalg::jacobi_svd(linalg::transposed(a), n, m, s, compute_uv, linalg::transposed(vh),
                           vh_rows, u, work, norms, order);
      }
      T* out = S.data<T>() + linalg::batch_offset(S, 1, batch, b);
      for (int64_t i = 0; i < k; ++i) out[i * S.stride(sr - 1)] = s[i];
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::_linalg_svd.U", svd_out, "TBB*TTT");

}  // namespace pteron
