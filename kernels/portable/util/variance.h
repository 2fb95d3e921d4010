// Variance (and optionally the mean) over a set of dims, shared by var.correction_out, var.out
// and var_mean.correction_out: divisor max(N - correction, 0); two passes per output chunk, mean
// then squared deviations, both pairwise, so no cancellation and no scratch memory.
#pragma once

#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// Fills `var` (and `mean` when not null: same shape) with the variance of `self` over the dims
// in `mask`. Floating dtypes only, as in torch.
inline Error variance_out(const char* op, const Tensor& self, uint32_t mask, double correction,
                          bool keepdim, Tensor& var, Tensor* mean) {
  const bool floating = is_floating(self.dtype()) && is_floating(var.dtype()) &&
                        (mean == nullptr || is_floating(mean->dtype()));
  PTERON_CHECK(floating, Error::NotSupported, "%s: needs floating point tensors, got %s -> %s", op,
               scalar_type_name(self.dtype()), scalar_type_name(var.dtype()));
  ReducePlan plan;
  Tensor* outs[2] = {&var, mean};
  PTERON_TRY(make_reduce_plan(op, self, mask, keepdim, outs, mean ? 2 : 1, true, &plan));
  const double n = static_cast<double>(plan.reduce_count);
  const double divisor = n - correction > 0 ? n - correction : 0.0;

  dispatch_accumulator(var.dtype(), [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = self.data<const T>();
      const auto add = [](A a, A b) { return a + b; };
      A mu[kReduceChunk], m2[kReduceChunk];
      for_each_output_chunk(plan, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t o1, int64_t c) {
        fold_columns<A>(
            plan, x, i0, c, A(0), [](auto v, int64_t) { return static_cast<A>(v); }, add, mu);
        for (int64_t j = 0; j < c; ++j) mu[j] /= static_cast<A>(n);
        fold_columns<A>(
            plan, x, i0, c, A(0),
            [&](auto v, int64_t j) {
              const A d = static_cast<A>(v) - mu[j];
              return d * d;
            },
            add, m2);
        for (int64_t j = 0; j < c; ++j) m2[j] = static_cast<A>(m2[j] / divisor);
        store_outputs(var, o0, plan.inner_out[0], m2, c);
        if (mean != nullptr) store_outputs(*mean, o1, plan.inner_out[1], mu, c);
      });
    });
  });
  return Error::Ok;
}

// The reduce mask of an optional dim list (None or [] = every dim).
inline Error optional_dims_mask(const char* op, const EValue& dims, int32_t rank, uint32_t* mask) {
  *mask = ~0u;
  if (dims.is_none() || dims.int_list.empty()) return Error::Ok;
  return dims_to_mask(op, dims.int_list.data(), dims.int_list.size(), rank, mask);
}

}  // namespace pteron
