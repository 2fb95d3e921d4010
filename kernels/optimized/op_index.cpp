// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out), optimized for one
// 1-D index tensor on one dim (every other index None): an index_select, which is what
// torch.export's default decompositions make of reflection and replication padding (two per
// pad: rows, then columns) and of x[:, idx]. 4-byte elements in the default dim order, int64 or
// int32 indices; whole rows copied where the dims after the indexed one hold 16 elements or more,
// else gathered element by element, on threads. The portable kernel walks every element through
// the general advanced-indexing plan (a style-transfer net's 24 padding gathers: 12.4 ms of its
// 37). Everything else, and indices out of range (its error), go to the portable kernel.
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::index.Tensor_out";

// Rows of at least this many elements are copied whole.
constexpr int64_t kRowCopy = 16;

template <typename I>
bool read_indices(const Tensor& index, int64_t D, int64_t* out) {
  const I* p = index.data<const I>();
  for (int64_t k = 0; k < index.numel(); ++k) {
    const int64_t v = static_cast<int64_t>(p[k]);
    if (v < -D || v >= D) return false;
    out[k] = v < 0 ? v + D : v;
  }
  return true;
}

Error index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<Tensor* const> indices = args[1]->tensor_list;
  Tensor& out = *args[2]->tensor;
  int32_t dim = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] == nullptr) continue;
    if (dim >= 0) return optimized::call_portable(kOp, ctx, args);  // several index tensors
    dim = static_cast<int32_t>(i);
  }
  if (dim < 0 || dim >= self.dim() || self.element_size() != 4 || out.dtype() != self.dtype() ||
      !is_row_major(self) || !is_row_major(out))
    return optimized::call_portable(kOp, ctx, args);
  const Tensor& index = *indices[dim];
  const bool int_index = index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int;
  if (index.dim() != 1 || !int_index || !is_row_major(index))
    return optimized::call_portable(kOp, ctx, args);
  const int64_t D = self.size(dim), K = index.numel();
  auto* at = static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * (K > 0 ? K : 1), 64));
  if (at == nullptr) return optimized::call_portable(kOp, ctx, args);
  const bool in_range = index.dtype() == ScalarType::Long ? read_indices<int64_t>(index, D, at)
                                                          : read_indices<int32_t>(index, D, at);
  if (!in_range) return optimized::call_portable(kOp, ctx, args);  // it names the bad index
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d)
    sizes[d] = d == dim ? static_cast<int32_t>(K) : self.size(d);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int32_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const uint32_t* x = static_cast<const uint32_t*>(self.const_data());
  uint32_t* y = static_cast<uint32_t*>(out.mutable_data());
  if (inner >= kRowCopy) {
    parallel_for(outer * K, inner, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r / K, k = r % K;
        std::memcpy(y + r * inner, x + (o * D + at[k]) * inner, sizeof(uint32_t) * inner);
      }
    });
    return Error::Ok;
  }
  parallel_for(outer, K * inner, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const uint32_t* src = x + o * D * inner;
      uint32_t* dst = y + o * K * inner;
      for (int64_t k = 0; k < K; ++k)
        for (int64_t i = 0; i < inner; ++i) dst[k * inner + i] = src[at[k] * inner + i];
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index.Tensor_out", index_tensor_out, "TOT");

}  // namespace pteron::opt
