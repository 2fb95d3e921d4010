// aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool
// scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out) -> Tensor(a!)
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out[..., :] = weight[indices[...], :]. padding_idx, scale_grad_by_freq and sparse only matter
// for the backward pass and are ignored.
Error embedding_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::embedding.out";
  const Tensor& weight = *args[0]->tensor;
  const Tensor& indices = *args[1]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_CHECK(weight.dim() == 2, Error::InvalidArgument, "%s: weight must be 2-d, got %d-d", kOp,
               weight.dim());
  PTERON_TRY(expect_dtype(kOp, out, weight.dtype(), "out"));
  PTERON_TRY(expect_index_dtype(kOp, indices, "indices", true));
  PTERON_CHECK(indices.dim() < kMaxTensorDim, Error::NotSupported, "%s: indices rank above %d", kOp,
               kMaxTensorDim - 1);
  PTERON_TRY(check_indices(kOp, indices, weight.size(0), 0, false));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < indices.dim(); ++d) sizes[d] = indices.size(d);
  sizes[indices.dim()] = weight.size(1);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, indices.dim() + 1));
  if (out.numel() == 0) return Error::Ok;

  const int32_t k = indices.dim();
  const int64_t width = weight.size(1);
  const int64_t ws = weight.stride(1), os = out.stride(k), row_stride = weight.stride(0);
  const bool dense_rows = ws == 1 && os == 1;
  const size_t row_bytes = static_cast<size_t>(width) * weight.element_size();
  int64_t out_strides[kMaxTensorDim], idx_strides[kMaxTensorDim], zero[kMaxTensorDim] = {0};
  for (int32_t d = 0; d < k; ++d) {
    out_strides[d] = out.stride(d);
    idx_strides[d] = indices.stride(d);
  }
  // Walk the indices in logical order; each one copies a weight row into an out row.
  for_each_row3(
      sizes, k, out_strides, idx_strides, zero,
      [&](int64_t o, int64_t ix, int64_t, int64_t n, int64_t ostep, int64_t istep, int64_t) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t row = load_index(indices, ix + j * istep);
          char* dst = byte_ptr(out, o + j * ostep);
          const char* src = byte_ptr(weight, row * row_stride);
          if (dense_rows) {
            std::memcpy(dst, src, row_bytes);
          } else {
            strided_copy(dst, &os, src, &ws, &width, 1, weight.element_size());
          }
        }
      });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::embedding.out", embedding_out, "TTIBBT");

}  // namespace pteron
