// aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
//     bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out)
// Optimized for contiguous weight/out and int64 indices: index checks first, then row copies
// split over threads. Anything else goes through the portable kernel (which also reports every
// error, out-of-range indices included).
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::embedding.out";

Error embedding_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& weight = *args[0]->tensor;
  const Tensor& indices = *args[1]->tensor;
  Tensor& out = *args[5]->tensor;
  if (weight.dim() != 2 || indices.dtype() != ScalarType::Long || out.dtype() != weight.dtype() ||
      !is_row_major(weight) || !is_row_major(indices) || !is_row_major(out) ||
      indices.dim() >= kMaxTensorDim) {
    return optimized::call_portable(kOp, ctx, args);
  }
  const int64_t* idx = indices.data<const int64_t>();
  const int64_t n = indices.numel(), rows = weight.size(0);
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= rows)
      return optimized::call_portable(kOp, ctx, args);  // reports it
  }
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < indices.dim(); ++d) sizes[d] = indices.size(d);
  sizes[indices.dim()] = weight.size(1);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, indices.dim() + 1));
  const size_t row_bytes = static_cast<size_t>(weight.size(1)) * weight.element_size();
  const char* src = static_cast<const char*>(weight.const_data());
  char* dst = static_cast<char*>(out.mutable_data());
  parallel_for(n, static_cast<int64_t>(row_bytes) / 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::memcpy(dst + i * row_bytes, src + idx[i] * row_bytes, row_bytes);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::embedding.out", embedding_out, "TTIBBT");

}  // namespace pteron::opt
