// aten::_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *, Tensor(a!) out)
// out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p for x1 [..., P, M] and x2 [..., R, M]
// (batch dims broadcast). compute_mode only picks torch's algorithm for p = 2 (a matmul
// expansion, less exact); the direct sum is computed whatever it says. Floating dtypes, p >= 0.
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/pdistance.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error cdist_forward_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_cdist_forward.out";
  const Tensor& x1 = *args[0]->tensor;
  const Tensor& x2 = *args[1]->tensor;
  const double p = args[2]->d;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(x1.dim() >= 2 && x2.dim() >= 2, Error::InvalidArgument,
               "%s: x1 and x2 need at least 2 dims, got %d and %d", kOp, static_cast<int>(x1.dim()),
               static_cast<int>(x2.dim()));
  PTERON_CHECK(x1.size(x1.dim() - 1) == x2.size(x2.dim() - 1), Error::InvalidArgument,
               "%s: x1 and x2 must have the same number of columns, got %d and %d", kOp,
               static_cast<int>(x1.size(x1.dim() - 1)), static_cast<int>(x2.size(x2.dim() - 1)));
  PTERON_CHECK(p >= 0, Error::InvalidArgument, "%s: p must be >= 0, got %g", kOp, p);
  PTERON_CHECK(is_floating(x1.dtype()) && x2.dtype() == x1.dtype() && out.dtype() == x1.dtype(),
               Error::NotSupported, "%s: needs floating tensors of one dtype, got %s, %s -> %s",
               kOp, scalar_type_name(x1.dtype()), scalar_type_name(x2.dtype()),
               scalar_type_name(out.dtype()));
  // Broadcast the batch dims (all but the last two), right-aligned.
  const int32_t b1 = x1.dim() - 2, b2 = x2.dim() - 2;
  const int32_t batch_rank = b1 > b2 ? b1 : b2;
  int32_t sizes[kMaxTensorDim];
  int64_t s1[kMaxTensorDim], s2[kMaxTensorDim];
  for (int32_t d = 0; d < batch_rank; ++d) {
    const int32_t d1 = d - (batch_rank - b1), d2 = d - (batch_rank - b2);
    const int32_t n1 = d1 >= 0 ? x1.size(d1) : 1, n2 = d2 >= 0 ? x2.size(d2) : 1;
    PTERON_CHECK(n1 == n2 || n1 == 1 || n2 == 1, Error::InvalidArgument,
                 "%s: batch dims do not broadcast (%d vs %d)", kOp, static_cast<int>(n1),
                 static_cast<int>(n2));
    sizes[d] = n1 == 1 ? n2 : n1;
    s1[d] = n1 == 1 ? 0 : x1.stride(d1);
    s2[d] = n2 == 1 ? 0 : x2.stride(d2);
  }
  const int64_t P = x1.size(b1), R = x2.size(b2), M = x1.size(b1 + 1);
  sizes[batch_rank] = static_cast<int32_t>(P);
  sizes[batch_rank + 1] = static_cast<int32_t>(R);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, batch_rank + 2));
  if (out.numel() == 0) return Error::Ok;
  int64_t batches = 1;
  for (int32_t d = 0; d < batch_rank; ++d) batches *= sizes[d];
  dispatch_dtype(x1.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = x1.data<const T>();
    const T* b = x2.data<const T>();
    T* y = out.data<T>();
    int64_t idx[kMaxTensorDim] = {0};
    for (int64_t n = 0; n < batches; ++n) {
      int64_t o1 = 0, o2 = 0, oo = 0;
      for (int32_t d = 0; d < batch_rank; ++d) {
        o1 += idx[d] * s1[d];
        o2 += idx[d] * s2[d];
        oo += idx[d] * out.stride(d);
      }
      for (int64_t i = 0; i < P; ++i) {
        for (int64_t j = 0; j < R; ++j) {
          const double dist = pnorm_distance(a + o1 + i * x1.stride(b1), x1.stride(b1 + 1),
                                             b + o2 + j * x2.stride(b2), x2.stride(b2 + 1), M, p);
          y[oo + i * out.stride(batch_rank) + j * out.stride(batch_rank + 1)] =
              store_value<T>(dist);
        }
      }
      for (int32_t d = batch_rank - 1; d >= 0; --d) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_cdist_forward.out", cdist_forward_out, "TTDiT");

}  // namespace pteron
