// aten::linalg_qr.out(Tensor A, str mode='reduced', *, Tensor(a!) Q, Tensor(b!) R)
//     -> (Tensor(a!) Q, Tensor(b!) R)
// The QR decomposition A = Q R of each matrix of A (*, m, n), k = min(m, n): Householder
// reflections as LAPACK's geqrf + orgqr (util/linalg_decompositions.h), so Q and R are torch's
// to rounding, signs included. mode 'reduced': Q (*, m, k), R (*, k, n); 'complete': Q (*, m, m),
// R (*, m, n); 'r': R (*, k, n) alone, Q empty (0,) as torch returns it. float32 / float64, in
// the matrix dtype.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/linalg_decompositions.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::linalg_qr.out";

Error qr_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& A = *args[0]->tensor;
  const EValue& mode = *args[1];
  Tensor& Q = *args[2]->tensor;
  Tensor& R = *args[3]->tensor;
  PTERON_TRY(check_string_arg(kOp, mode, 1, false));
  const bool complete = string_equals(mode, "complete");
  const bool want_q = !string_equals(mode, "r");
  PTERON_CHECK(complete || !want_q || string_equals(mode, "reduced"), Error::InvalidArgument,
               "%s: mode must be 'reduced', 'complete' or 'r', got '%.*s'", kOp,
               static_cast<int>(mode.string.size()), mode.string.data());
  PTERON_CHECK(A.dim() >= 2, Error::InvalidArgument,
               "%s: A must be a batch of matrices (*, m, n), got %d dims", kOp, A.dim());
  PTERON_TRY(expect_dtype(kOp, R, A.dtype(), "R"));
  PTERON_TRY(expect_dtype(kOp, Q, A.dtype(), "Q"));
  const int32_t r = A.dim();
  const int64_t m = A.size(r - 2), n = A.size(r - 1);
  const int64_t k = m < n ? m : n;
  const int64_t q_cols = complete ? m : k, r_rows = complete ? m : k;
  linalg::Batch batch;
  PTERON_TRY(linalg::broadcast_batch(kOp, A, 2, batch));
  PTERON_TRY(linalg::expect_batched_out(kOp, R, batch, r_rows, n));
  if (want_q) {
    PTERON_TRY(linalg::expect_batched_out(kOp, Q, batch, m, q_cols));
  } else {
    PTERON_CHECK(Q.numel() == 0, Error::InvalidArgument,
                 "%s: Q must be empty in mode 'r' (torch returns a (0,) tensor)", kOp);
  }
  return linalg::dispatch_real(kOp, A.dtype(), [&](auto t) {
    using T = decltype(t);
    // The factorisation in place, column-major, wide enough for complete mode's m columns of Q.
    const int64_t cols = q_cols > n ? q_cols : n;
    const int64_t work_size = m * cols > 0 ? m * cols : 1;
    auto* work = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * work_size, alignof(T)));
    auto* tau = static_cast<T*>(ctx.allocate_scratch(sizeof(T) * (k > 0 ? k : 1), alignof(T)));
    PTERON_CHECK(work != nullptr && tau != nullptr, Error::OutOfMemory,
                 "%s: no scratch memory for a %lldx%lld factorisation", kOp,
                 static_cast<long long>(m), static_cast<long long>(n));
    const MatrixRef<T> w{work, 1, m};
    for (int64_t b = 0; b < batch.count; ++b) {
      linalg::copy_matrix(
          matrix_view<const T>(A, r - 2, r - 1, linalg::batch_offset(A, 2, batch, b)), w, m, n);
      linalg::qr_factor(w, m, n, tau);
      MatrixRef<T> rv = matrix_view<T>(R, r - 2, r - 1, linalg::batch_offset(R, 2, batch, b));
      for (int64_t i = 0; i < r_rows; ++i)
        for (int64_t j = 0; j < n; ++j)
          rv.data[i * rv.rs + j * rv.cs] = j >= i ? work[j * m + i] : T(0);
      if (!want_q) continue;
      linalg::qr_form_q(w, m, q_cols, k, tau);
      linalg::copy_matrix(MatrixRef<const T>{work, 1, m},
                          matrix_view<T>(Q, r - 2, r - 1, linalg::batch_offset(Q, 2, batch, b)), m,
                          q_cols);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("aten::linalg_qr.out", qr_out, "T*TT");

}  // namespace pteron
