#include "kernels/portable/util/index_put.h"

#include <type_traits>

#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/wrapping.h"

namespace pteron {

// out = self; out[indices] = values (or += with accumulate, duplicates adding up), values
// broadcast to the indexed shape. A KV-cache write: out is usually self's own memory.
Error index_put_into(KernelContext& ctx, const char* kOp, const Tensor& self,
                     Span<Tensor* const> indices, const Tensor& values, bool accumulate,
                     Tensor& out) {
  PTERON_TRY(expect_dtype(kOp, values, self.dtype(), "values"));

  // Every index is checked (plan_advanced_index) before out is written.
  AdvancedIndex plan;
  PTERON_TRY(plan_advanced_index(ctx, kOp, self, indices, &plan));
  PTERON_CHECK(values.dim() <= plan.result_dim, Error::InvalidArgument,
               "%s: values of rank %d do not broadcast to the indexed rank %d", kOp, values.dim(),
               plan.result_dim);
  for (int32_t d = 0; d < values.dim(); ++d) {
    const int32_t r = plan.result_sizes[plan.result_dim - values.dim() + d];
    PTERON_CHECK(values.size(d) == r || values.size(d) == 1, Error::InvalidArgument,
                 "%s: values size %d at dim %d does not broadcast to the indexed size %d", kOp,
                 values.size(d), d, r);
  }
  // The indices are read while out is written: out over an index tensor's bytes would change
  // indices already checked (only a corrupt memory plan does it; the fuzzer found one).
  const auto* out_begin = static_cast<const uint8_t*>(out.const_data());
  for (int32_t s = 0; s < self.dim(); ++s) {
    const Tensor* t = plan.index[s];
    if (t == nullptr || t->nbytes() == 0 || out.nbytes() == 0) continue;
    const auto* t_begin = static_cast<const uint8_t*>(t->const_data());
    PTERON_CHECK(t_begin + t->nbytes() <= out_begin || out_begin + out.nbytes() <= t_begin,
                 Error::InvalidArgument, "%s: out overlaps the index tensor of dim %d", kOp, s);
  }
  PTERON_TRY(start_from_self(kOp, self, out));
  if (out.numel() == 0) return Error::Ok;

  int64_t out_strides[kMaxTensorDim], value_strides[kMaxTensorDim];
  tensor_strides(out, out_strides);
  broadcast_strides(values, plan.result_sizes, plan.result_dim, value_strides);
  int32_t block[kMaxTensorDim];
  int64_t block_os[kMaxTensorDim], block_vs[kMaxTensorDim], zero[kMaxTensorDim] = {0};
  for (int32_t k = 0; k < plan.nc; ++k) {
    block[k] = self.size(plan.c_dims[k]);
    block_os[k] = out_strides[plan.c_dims[k]];
    block_vs[k] = value_strides[plan.na + plan.b_dim + k];
  }
  const bool ok = dispatch_dtype_in<kAllTypes>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    T* dst = out.data<T>();
    const T* src = values.data<const T>();
    for_each_index_position(plan, self, out_strides, value_strides, [&](int64_t o, int64_t v) {
      for_each_row3(
          block, plan.nc, block_os, block_vs, zero,
          [&](int64_t oo, int64_t vv, int64_t, int64_t n, int64_t os, int64_t vs, int64_t) {
            T* d = dst + o + oo;
            const T* s = src + v + vv;
            for (int64_t j = 0; j < n; ++j) {
              if (accumulate) {
                d[j * os] =
                    store_value<T>(wrapping_add<C>(load_value(d[j * os]), load_value(s[j * vs])));
              } else if constexpr (std::is_same_v<T, bool>) {
                d[j * os] = load_value(s[j * vs]);  // never copy a non-0/1 byte
              } else {
                d[j * os] = s[j * vs];
              }
            }
          });
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(self.dtype()));
  return Error::Ok;
}

}  // namespace pteron
