// aten::linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False,
//     *, ScalarType? dtype=None, Tensor(a!) out)
// out = (sum |x|^ord)^(1/ord) over dim (None or [] = every dim), what F.normalize and
// cosine_similarity export to; ord 0 counts non-zeros, inf / -inf take the largest / smallest
// |x|. self is read in its dtype and accumulated in out's (float for float/half/bf16, double
// for double); floating dtypes only, as in torch.
#include <cmath>

#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error linalg_vector_norm_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::linalg_vector_norm.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_CHECK(is_floating(self.dtype()) && is_floating(out.dtype()), Error::NotSupported,
               "%s: needs floating point tensors, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  PTERON_CHECK(args[4]->is_none() || args[4]->i == static_cast<int64_t>(out.dtype()),
               Error::InvalidArgument, "%s: dtype argument does not match out's dtype %s", kOp,
               scalar_type_name(out.dtype()));
  const double ord = args[1]->scalar_as_double();
  uint32_t mask = ~0u;
  if (!args[2]->is_none() && !args[2]->int_list.empty()) {
    const Span<const int64_t> dims = args[2]->int_list;
    PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  }
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[3]->b, outs, 1, true, &plan));
  // torch refuses -inf over nothing (no minimum of an empty set); inf over nothing is 0.
  PTERON_CHECK(!(plan.reduce_count == 0 && std::isinf(ord) && ord < 0 && !plan.empty_output),
               Error::InvalidArgument, "%s: ord -inf over an empty dimension", kOp);
  dispatch_accumulator(out.dtype(), [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = self.data<const T>();
      const A p = static_cast<A>(ord);
      A acc[kReduceChunk];
      for_each_output_chunk(plan, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t, int64_t c) {
        const auto abs_of = [](auto v, int64_t) {
          return static_cast<A>(std::fabs(static_cast<A>(v)));
        };
        if (std::isinf(ord)) {
          const bool largest = ord > 0;
          const A identity = largest ? A(0) : std::numeric_limits<A>::infinity();
          const auto pick = [largest](A a, A b) -> A {
            if constexpr (std::is_floating_point_v<A>) {
              if (b != b) return b;  // NaN propagates
            }
            return largest ? (b > a ? b : a) : (b < a ? b : a);
          };
          fold_columns<A, false>(plan, x, i0, c, identity, abs_of, pick, acc);
        } else if (ord == 0) {
          fold_columns<A>(
              plan, x, i0, c, A(0), [](auto v, int64_t) { return static_cast<A>(v != 0 ? 1 : 0); },
              [](A a, A b) { return a + b; }, acc);
        } else if (ord == 1) {
          fold_columns<A>(plan, x, i0, c, A(0), abs_of, [](A a, A b) { return a + b; }, acc);
        } else if (ord == 2) {
          fold_columns<A>(
              plan, x, i0, c, A(0),
              [](auto v, int64_t) {
                const A a = static_cast<A>(v);
                return a * a;
              },
              [](A a, A b) { return a + b; }, acc);
          for (int64_t j = 0; j < c; ++j) acc[j] = std::sqrt(acc[j]);
        } else {
          fold_columns<A>(
              plan, x, i0, c, A(0),
              [p](auto v, int64_t) {
                return static_cast<A>(std::pow(std::fabs(static_cast<A>(v)), p));
              },
              [](A a, A b) { return a + b; }, acc);
          for (int64_t j = 0; j < c; ++j) acc[j] = static_cast<A>(std::pow(acc[j], A(1) / p));
        }
        store_outputs(out, o0, plan.inner_out[0], acc, c);
      });
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::linalg_vector_norm.out", linalg_vector_norm_out, "TSlBiT");

}  // namespace pteron
