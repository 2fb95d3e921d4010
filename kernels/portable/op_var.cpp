// aten::var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)
#include <type_traits>

#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Variance over dim (None or [] = every dim) with divisor max(N - correction, 0) (correction
// defaults to 1). Two passes per output chunk, mean then squared deviations, both pairwise, so
// no cancellation and no scratch memory.
Error var_correction_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::var.correction_out";
  PTERON_TRY(check_args(kOp, args, "TlsBT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(is_floating(self.dtype()) && is_floating(out.dtype()), Error::NotSupported,
               "%s: needs floating point tensors, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  uint32_t mask = ~0u;
  if (!args[1]->is_none() && !args[1]->int_list.empty()) {
    const Span<const int64_t> dims = args[1]->int_list;
    PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  }
  const double correction = args[2]->is_none() ? 1.0 : args[2]->scalar_as_double();
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[3]->b, outs, 1, true, &plan));
  const double n = static_cast<double>(plan.reduce_count);
  const double divisor = n - correction > 0 ? n - correction : 0.0;

  dispatch_accumulator(out.dtype(), [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = self.data<const T>();
      const auto add = [](A a, A b) { return a + b; };
      A mean[kReduceChunk], m2[kReduceChunk];
      for_each_output_chunk(plan, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t, int64_t c) {
        fold_columns<A>(
            plan, x, i0, c, A(0), [](auto v, int64_t) { return static_cast<A>(v); }, add, mean);
        for (int64_t j = 0; j < c; ++j) mean[j] /= static_cast<A>(n);
        fold_columns<A>(
            plan, x, i0, c, A(0),
            [&](auto v, int64_t j) {
              const A d = static_cast<A>(v) - mean[j];
              return d * d;
            },
            add, m2);
        for (int64_t j = 0; j < c; ++j) m2[j] = static_cast<A>(m2[j] / divisor);
        store_outputs(out, o0, plan.inner_out[0], m2, c);
      });
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::var.correction_out", var_correction_out);

}  // namespace pteron
