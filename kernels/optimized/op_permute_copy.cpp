// aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out), optimized for 4-byte
// elements in the default dim order: when the permutation moves the input's innermost dim the
// copy is a batch of 2-D transposes, else a batch of whole-row copies, both on threads
// (util/transpose_copy.h; the portable kernel copied a head split's rows on one thread). Other
// dtypes, layouts and errors go through the portable kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/transpose_copy.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::permute_copy.out";

Error permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> dims = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  const int32_t rank = self.dim();
  if (self.element_size() != 4 || out.dtype() != self.dtype() || !is_row_major(self) ||
      !is_row_major(out) || static_cast<int32_t>(dims.size()) != rank || rank < 2) {
    return optimized::call_portable(kOp, ctx, args);
  }
  optimized::TransposeCopy t;
  t.in = self.data<const float>();
  t.out = out.data<float>();
  t.rank = rank;
  int32_t sizes[kMaxTensorDim];
  uint32_t seen = 0;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t d = 0;
    if (normalize_dim(kOp, dims[i], rank, &d) != Error::Ok || (seen & (1u << d))) {
      return optimized::call_portable(kOp, ctx, args);  // it reports the bad dims
    }
    seen |= 1u << d;
    sizes[i] = self.size(d);
    t.sizes[i] = sizes[i];
    t.in_strides[i] = self.stride(d);
    if (d == rank - 1) t.a = i;
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, rank));
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    t.out_strides[d] = stride;
    stride *= t.sizes[d];
  }
  if (optimized::is_transpose_copy(t)) {
    optimized::run_transpose_copy(t);
  } else if (!optimized::run_row_copy(t)) {  // innermost stays innermost: rows
    return optimized::call_portable(kOp, ctx, args);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::permute_copy.out", permute_copy_out, "TLT");

}  // namespace pteron::opt
