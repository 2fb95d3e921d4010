// Max/min reductions shared by amax/amin and max/min.unary_out (values only) and
// argmax/argmin/max.dim/min.dim (positions, optionally values). NaN propagates as in torch.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// out = max (kMax) or min of each output's reduce space; out has in's dtype.
template <bool kMax>
Error extreme_reduce(const char* name, const Tensor& in, Tensor& out, const ReducePlan& p) {
  if (p.reduce_count == 0 && !p.empty_output) {
    return fail(Error::InvalidArgument, "%s: cannot reduce over a dimension of size 0", name);
  }
  const bool ok = dispatch_dtype(in.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const C identity =
        kMax ? (std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                     : std::numeric_limits<C>::lowest())
             : (std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                     : std::numeric_limits<C>::max());
    const auto pick = [](C a, C b) -> C {
      if constexpr (kMax)
        return ((b > a) | (b != b)) ? b : a;  // "|": no branch, so loops vectorise
      else
        return ((b < a) | (b != b)) ? b : a;
    };
    const auto f = [](C v, int64_t) { return v; };
    const T* x = in.data<const T>();
    T* o = out.data<T>();
    C acc[kReduceChunk];
    for_each_output_chunk(p, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t, int64_t c) {
      fold_columns<C, false>(p, x, i0, c, identity, f, pick, acc);
      for (int64_t j = 0; j < c; ++j) o[o0 + j * p.inner_out[0]] = store_value<T>(acc[j]);
    });
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", name,
                scalar_type_name(in.dtype()));
  }
  return Error::Ok;
}

// indices = position of the first max (kMax) or min along the reduce space; `values` (may be
// null) gets the value. The plan's first out is `values` when given, else `indices`.
template <bool kMax>
Error arg_reduce(const char* name, const Tensor& in, Tensor* values, Tensor& indices,
                 const ReducePlan& p) {
  if (p.reduce_count == 0 && !p.empty_output) {
    return fail(Error::InvalidArgument, "%s: cannot reduce over a dimension of size 0", name);
  }
  const int32_t index_out = values != nullptr ? 1 : 0;
  const bool ok = dispatch_dtype(in.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const T* x = in.data<const T>();
    int64_t* io = indices.data<int64_t>();
    C best[kReduceChunk];
    int64_t pos[kReduceChunk];
    for_each_output_chunk(p, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t o1, int64_t c) {
      arg_fold_columns<kMax>(p, x, i0, c, best, pos);
      const int64_t ib = index_out == 1 ? o1 : o0;
      for (int64_t j = 0; j < c; ++j) io[ib + j * p.inner_out[index_out]] = pos[j];
      if (values != nullptr) {
        T* vo = values->data<T>();
        for (int64_t j = 0; j < c; ++j) vo[o0 + j * p.inner_out[0]] = store_value<T>(best[j]);
      }
    });
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", name,
                scalar_type_name(in.dtype()));
  }
  return Error::Ok;
}

// The whole amax.out / amin.out kernel (they differ only in the comparison): args are
// self, dim ([] = every dim), keepdim, out; out has self's dtype; NaN propagates.
template <bool kMax>
Error amax_amin_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected %s", op, scalar_type_name(out.dtype()),
               scalar_type_name(self.dtype()));
  const Span<const int64_t> dims = args[1]->int_list;
  uint32_t mask = ~0u;
  if (!dims.empty()) PTERON_TRY(dims_to_mask(op, dims.data(), dims.size(), self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(op, self, mask, args[2]->b, outs, 1, true, &plan));
  return extreme_reduce<kMax>(op, self, out, plan);
}

// The whole argmax.out / argmin.out kernel: args are self, dim (None = the flattened tensor),
// keepdim, out (int64); the position of the first extreme (NaN counts as the extreme).
template <bool kMax>
Error argmax_argmin_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(out.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: out must be int64, got %s", op, scalar_type_name(out.dtype()));
  uint32_t mask = ~0u;
  if (!args[1]->is_none()) {
    PTERON_TRY(dims_to_mask(op, &args[1]->i, 1, self.dim(), &mask));
  }
  // A flat position over several dims must count in logical order, not memory order.
  const bool all_dims = args[1]->is_none();
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(op, self, mask, args[2]->b, outs, 1,
                              !all_dims || self.is_contiguous(), &plan));
  return arg_reduce<kMax>(op, self, nullptr, out, plan);
}

// The whole max.dim_max / min.dim_min kernel: args are self, dim, keepdim, values (self's dtype),
// indices (int64): the extreme along dim and the position of its first occurrence.
template <bool kMax>
Error max_min_dim_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& values = *args[3]->tensor;
  Tensor& indices = *args[4]->tensor;
  PTERON_CHECK(values.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: values out has dtype %s, expected %s", op, scalar_type_name(values.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices out must be int64, got %s", op, scalar_type_name(indices.dtype()));
  uint32_t mask = 0;
  PTERON_TRY(dims_to_mask(op, &args[1]->i, 1, self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[2] = {&values, &indices};
  PTERON_TRY(make_reduce_plan(op, self, mask, args[2]->b, outs, 2, true, &plan));
  return arg_reduce<kMax>(op, self, &values, indices, plan);
}

// The whole max.unary_out / min.unary_out kernel: the extreme of every element into a 0-d out
// of self's dtype; an empty self fails, as in torch.
template <bool kMax>
Error max_min_unary_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected %s", op, scalar_type_name(out.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(self.numel() > 0, Error::InvalidArgument,
               "%s: an empty tensor has no %s (specify a dim)", op, kMax ? "maximum" : "minimum");
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(op, self, ~0u, false, outs, 1, true, &plan));
  return extreme_reduce<kMax>(op, self, out, plan);
}

}  // namespace pteron
