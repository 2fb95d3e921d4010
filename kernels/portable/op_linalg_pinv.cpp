// aten::linalg_pinv.atol_rtol_tensor_out(Tensor self, *, Tensor? atol=None, Tensor? rtol=None,
//     bool hermitian=False, Tensor(a!) out) -> Tensor(a!)
// The Moore-Penrose pseudo-inverse (*, n, m) of each matrix of self (*, m, n), as torch computes
// it: from the SVD A = U diag(s) Vh, pinv = Vh^T diag(1/s) U^T with the singular values at or
// below max(atol, rtol * s_max) dropped; hermitian: from the eigen-decomposition of the lower
// triangle, A = V diag(w) V^T, pinv = V diag(1/w) V^T dropping |w| at or below
// max(atol, rtol * max|w|). atol and rtol (torch.linalg.pinv and pinverse export them as float64
// tensors) broadcast with the batch dims; without them atol is 0 and rtol eps * max(m, n), or 0
// where atol is given and positive, as torch's defaults. The decompositions are the eigh / svd
// kernels' (util/linalg_decompositions.h); a matrix with a NaN or Inf gets a NaN result.
// float32 / float64, in the matrix dtype.
#include <algorithm>
#include <limits>

#include "kernels/portable/util/linalg_decompositions.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::linalg_pinv.atol_rtol_tensor_out";

// Element `b` of the batch of a tolerance tensor (float32 / float64) as a double.
double tolerance_at(const Tensor& t, const linalg::Batch& batch, int64_t b) {
  const int64_t at = linalg::batch_offset(t, 0, batch, b);
  return t.dtype() == ScalarType::Double ? t.data<double>()[at]
                                         : static_cast<double>(t.data<float>()[at]);
}

Error expect_tolerance(const Tensor* t, const char* name, linalg::Batch& batch) {
  if (t == nullptr) return Error::Ok;
  PTERON_CHECK(t->dtype() == ScalarType::Double || t->dtype() == ScalarType::Float,
               Error::InvalidArgument, "%s: %s must be float32 or float64, not %s", kOp, name,
               scalar_type_name(t->dtype()));
  return linalg::broadcast_batch(kOp, *t, 0, batch);
}

Error pinv_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& A = *args[0]->tensor;
  const Tensor* atol = args[1]->is_tensor() ? args[1]->tensor : nullptr;
  const Tensor* rtol = args[2]->is_tensor() ? args[2]->tensor : nullptr;
  const bool hermitian = args[3]->b;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, A.dtype(), "out"));
  const int32_t r = A.dim();
  PTERON_CHECK(r >= 2, Error::InvalidArgument, "%s: self must have at least 2 dims, has %d", kOp,
               r);
  if (hermitian) PTERON_TRY(linalg::expect_square(kOp, "self", A));
  const int64_t m = A.size(r - 2), n = A.size(r - 1);
  const int64_t k = std::min(m, n), big = std::max(m, n);
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(expect_tolerance(atol, "atol", batch));
  PTERON_TRY(expect_tolerance(rtol, "rtol", batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, out, batch, n, m));
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    const int64_t one = 1;
    const int64_t kk = std::max(k, one), nb = std::max(big, one);
    // SVD: W (big x k), the two factors (big x k and k x k), s, norms, order; eigh: n x n twice.
    auto* work = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * nb * kk, alignof(T)));
    auto* left = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * nb * kk, alignof(T)));
    auto* right = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * kk * kk, alignof(T)));
    auto* s = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * kk, alignof(T)));
    auto* norms = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * kk, alignof(T)));
    auto* order =
        static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * kk, alignof(int64_t)));
    PTERON_CHECK(work && left && right && s && norms && order, Error::OutOfMemory,
                 "%s: no scratch memory for a %lldx%lld pseudo-inverse", kOp,
                 static_cast<long long>(m), static_cast<long long>(n));
    const double eps = std::numeric_limits<T>::epsilon();
    for (int64_t b = 0; b < batch.count; ++b) {
      const MatrixRef<const T> a =
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b));
      if (k == 0) continue;  // an empty result
      MatrixRef<T> o = matrix_view<T>(out, r - 2, r - 1, linalg::batch_offset(out, 2, batch, b));
      const double a_tol = atol != nullptr ? tolerance_at(*atol, batch, b) : 0.0;
      const double r_tol = rtol != nullptr                  ? tolerance_at(*rtol, batch, b)
                           : atol != nullptr && a_tol > 0.0 ? 0.0
                                                            : eps * static_cast<double>(big);
      if (!linalg::all_finite(a, m, n)) {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < m; ++j)
            o.data[i * o.rs + j * o.cs] = std::numeric_limits<T>::quiet_NaN();
        continue;
      }
      // A = Q diag(s) P^T with P (n x k) and Q (m x k), row-major in the scratch; pinv = P
      // diag(1/s) Q^T over the values kept.
      MatrixRef<T> p{nullptr, 0, 0}, q{nullptr, 0, 0};
      double largest = 0.0;
      if (hermitian) {
        MatrixRef<T> v{left, n, 1};
        linalg::symmetric_eigen(a, n, s, v, true, work, order);
        p = q = v;
        for (int64_t l = 0; l < k; ++l) largest = std::max(largest, std::abs(double(s[l])));
      } else {
        MatrixRef<T> tall{left, k, 1}, square{right, k, 1};
        if (m >= n) {
          linalg::jacobi_svd(a, m, n, s, true, tall, k, square, work, norms, order);
          q = tall;
          p = square;
        } else {
          linalg::jacobi_svd(linalg::transposed(a), n, m, s, true, tall, k, square, work, norms,
                             order);
          p = tall;
          q = square;
        }
        largest = k > 0 ? double(s[0]) : 0.0;
      }
      const double cut = std::max(a_tol, r_tol * largest);
      for (int64_t l = 0; l < k; ++l) s[l] = std::abs(double(s[l])) > cut ? T(1) / s[l] : T(0);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          T sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += p.data[i * p.rs + l * p.cs] * s[l] * q.data[j * q.rs + l * q.cs];
          o.data[i * o.rs + j * o.cs] = sum;
        }
      }
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::linalg_pinv.atol_rtol_tensor_out", pinv_out, "TttBT");

}  // namespace pteron
