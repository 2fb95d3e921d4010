#include "kernels/portable/util/advanced_index.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {
namespace {

// Expands the bool mask at indices[i] covering self dims [first, first + mask.dim()) into
// mask.dim() int64 coordinate tensors built in scratch.
Error expand_mask(KernelContext& ctx, const char* op, const Tensor& self, const Tensor& mask,
                  int32_t first, AdvancedIndex* plan) {
  const int32_t k = mask.dim();
  if (k == 0) return fail(Error::NotSupported, "%s: 0-d bool masks are not supported", op);
  if (first + k > self.dim()) {
    return fail(Error::InvalidArgument, "%s: too many indices for a %d-d tensor", op, self.dim());
  }
  for (int32_t d = 0; d < k; ++d) {
    if (mask.size(d) != self.size(first + d)) {
      return fail(Error::InvalidArgument,
                  "%s: mask of size %d does not match self's size %d at dim %d", op, mask.size(d),
                  self.size(first + d), first + d);
    }
  }
  int64_t mask_strides[kMaxTensorDim], zero[kMaxTensorDim] = {0};
  tensor_strides(mask, mask_strides);
  const uint8_t* m = mask.data<const uint8_t>();  // bytes: see load_value<bool>
  int64_t count = 0;
  for_each_row3(mask.sizes().data(), k, mask_strides, zero, zero,
                [&](int64_t o, int64_t, int64_t, int64_t n, int64_t step, int64_t, int64_t) {
                  for (int64_t j = 0; j < n; ++j) count += m[o + j * step] != 0 ? 1 : 0;
                });
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(k) * 8;
  int64_t* coords = static_cast<int64_t*>(ctx.allocate_scratch(bytes > 0 ? bytes : 8, 8));
  if (coords == nullptr) {
    return fail(Error::OutOfMemory, "%s: needs %zu bytes of scratch for a bool mask", op, bytes);
  }
  // coords[d * count + c]: coordinate along mask dim d of the c-th true element (row-major).
  int64_t idx[kMaxTensorDim] = {0}, c = 0, offset = 0;
  for (int64_t e = 0; e < mask.numel(); ++e) {
    if (m[offset]) {
      for (int32_t d = 0; d < k; ++d) coords[d * count + c] = idx[d];
      ++c;
    }
    for (int32_t d = k - 1; d >= 0; --d) {
      offset += mask.stride(d);
      if (++idx[d] < mask.size(d)) break;
      offset -= static_cast<int64_t>(mask.stride(d)) * mask.size(d);
      idx[d] = 0;
    }
  }
  for (int32_t d = 0; d < k; ++d) {
    const int32_t s = first + d;
    plan->mask_sizes[s] = static_cast<int32_t>(count);
    plan->mask_orders[s] = 0;
    plan->mask_storage[s] = Tensor(ScalarType::Long, 1, &plan->mask_sizes[s], &plan->mask_orders[s],
                                   &plan->mask_strides[s], coords + d * count);
    plan->index[s] = &plan->mask_storage[s];
  }
  return Error::Ok;
}

// Broadcasts B (plan->b_sizes) with t's shape, numpy rules.
Error broadcast_into(const char* op, AdvancedIndex* plan, const Tensor& t) {
  const int32_t dim = plan->b_dim > t.dim() ? plan->b_dim : t.dim();
  int32_t merged[kMaxTensorDim];
  for (int32_t i = 0; i < dim; ++i) {
    const int32_t bi = i - (dim - plan->b_dim), ti = i - (dim - t.dim());
    const int32_t bs = bi >= 0 ? plan->b_sizes[bi] : 1, ts = ti >= 0 ? t.size(ti) : 1;
    if (bs != ts && bs != 1 && ts != 1) {
      return fail(Error::InvalidArgument, "%s: index shapes do not broadcast (%d vs %d)", op, bs,
                  ts);
    }
    merged[i] = bs == 1 ? ts : bs;
  }
  plan->b_dim = dim;
  for (int32_t i = 0; i < dim; ++i) plan->b_sizes[i] = merged[i];
  return Error::Ok;
}

}  // namespace

Error plan_advanced_index(KernelContext& ctx, const char* op, const Tensor& self,
                          Span<Tensor* const> indices, AdvancedIndex* plan) {
  int32_t d = 0;  // self dim the next entry indexes
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor* t = indices[i];
    if (t != nullptr && (t->dtype() == ScalarType::Bool || t->dtype() == ScalarType::Byte)) {
      PTERON_CHECK(t->dtype() == ScalarType::Bool, Error::NotSupported,
                   "%s: uint8 masks are deprecated; use a bool mask", op);
      PTERON_TRY(expand_mask(ctx, op, self, *t, d, plan));
      d += t->dim();
      continue;
    }
    PTERON_CHECK(d < self.dim(), Error::InvalidArgument,
                 "%s: too many indices (%zu) for a %d-d tensor", op, indices.size(), self.dim());
    if (t != nullptr) {
      PTERON_CHECK(t->dtype() == ScalarType::Long || t->dtype() == ScalarType::Int,
                   Error::NotSupported,
                   "%s: index %zu has dtype %s; supported are int64, int32 and bool", op, i,
                   scalar_type_name(t->dtype()));
      plan->index[d] = t;
    }
    ++d;
  }

  // Broadcast the index tensors to B; note where the indexed dims sit.
  int32_t first = -1, last = -1;
  for (int32_t s = 0; s < self.dim(); ++s) {
    const Tensor* t = plan->index[s];
    if (t == nullptr) continue;
    if (first < 0) first = s;
    last = s;
    ++plan->count;
    PTERON_TRY(broadcast_into(op, plan, *t));
    PTERON_TRY(check_indices(op, *t, self.size(s), s, true));
  }
  const bool adjacent = last - first + 1 == plan->count;
  for (int32_t s = 0; s < self.dim(); ++s) {
    if (plan->index[s] != nullptr) continue;
    if (adjacent && s < first)
      plan->a_dims[plan->na++] = s;
    else
      plan->c_dims[plan->nc++] = s;
  }
  plan->result_dim = plan->na + plan->b_dim + plan->nc;
  PTERON_CHECK(plan->result_dim <= kMaxTensorDim, Error::NotSupported,
               "%s: result rank %d above %d", op, plan->result_dim, kMaxTensorDim);
  for (int32_t k = 0; k < plan->na; ++k) plan->result_sizes[k] = self.size(plan->a_dims[k]);
  for (int32_t k = 0; k < plan->b_dim; ++k) plan->result_sizes[plan->na + k] = plan->b_sizes[k];
  for (int32_t k = 0; k < plan->nc; ++k)
    plan->result_sizes[plan->na + plan->b_dim + k] = self.size(plan->c_dims[k]);
  return Error::Ok;
}

}  // namespace pteron
