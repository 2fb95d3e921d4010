// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::index.Tensor_out";

// out[o] = self[src] for every position of an index with no C block, as elements of type E.
template <typename E>
Error gather_elements(const AdvancedIndex& plan, const Tensor& self, const int64_t* self_strides,
                      Tensor& out, const int64_t* out_strides) {
  const E* from = static_cast<const E*>(self.const_data());
  E* to = static_cast<E*>(out.mutable_data());
  for_each_index_position(plan, self, self_strides, out_strides,
                          [&](int64_t src, int64_t o) { to[o] = from[src]; });
  return Error::Ok;
}

// out = self[indices] (advanced indexing, util/advanced_index.h).
Error index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<Tensor* const> indices = args[1]->tensor_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));

  AdvancedIndex plan;
  PTERON_TRY(plan_advanced_index(ctx, kOp, self, indices, &plan));
  if (plan.count == 0) return copy_tensor(kOp, self, out);  // all ":" (or no indices)
  PTERON_TRY(expect_out_shape(kOp, out, plan.result_sizes, plan.result_dim));
  if (out.numel() == 0) return Error::Ok;

  // The C block every (A, B) position copies.
  int64_t block[kMaxTensorDim], block_ss[kMaxTensorDim], block_ds[kMaxTensorDim];
  for (int32_t k = 0; k < plan.nc; ++k) {
    block[k] = self.size(plan.c_dims[k]);
    block_ss[k] = self.stride(plan.c_dims[k]);
    block_ds[k] = out.stride(plan.na + plan.b_dim + k);
  }
  int64_t self_strides[kMaxTensorDim], out_strides[kMaxTensorDim];
  tensor_strides(self, self_strides);
  tensor_strides(out, out_strides);
  const size_t elem = self.element_size();
  if (plan.nc == 0) {  // one element a position: a move of its fixed size, not a memcpy call
    switch (elem) {
      case 1:
        return gather_elements<uint8_t>(plan, self, self_strides, out, out_strides);
      case 2:
        return gather_elements<uint16_t>(plan, self, self_strides, out, out_strides);
      case 4:
        return gather_elements<uint32_t>(plan, self, self_strides, out, out_strides);
      case 8:
        return gather_elements<uint64_t>(plan, self, self_strides, out, out_strides);
    }
  }
  for_each_index_position(plan, self, self_strides, out_strides, [&](int64_t src, int64_t o) {
    if (plan.nc == 0) {
      __builtin_memcpy(byte_ptr(out, o), byte_ptr(self, src), elem);
    } else {
      strided_copy(byte_ptr(out, o), block_ds, byte_ptr(self, src), block_ss, block, plan.nc, elem);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index.Tensor_out", index_tensor_out, "TOT");

}  // namespace pteron
