// aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::index.Tensor_out";

// Advanced indexing: self[i0, :, i2] with int index tensors (negative values count from the
// end) that broadcast to one shape B, and None entries (or missing trailing ones) meaning ":".
// When the indexed dims are adjacent, B replaces them in place; otherwise B goes first, as in
// numpy. A bool mask is the same as its nonzero() coordinates; it is expanded into int index
// tensors in scratch memory.
struct IndexPlan {
  const Tensor* index[kMaxTensorDim] = {};  // per self dim; nullptr = full slice
  int32_t b_dim = 0;
  int32_t b_sizes[kMaxTensorDim];
};

// Expands the bool mask at indices[i] covering self dims [first, first + mask.dim()) into
// mask.dim() int64 coordinate tensors built in scratch.
Error expand_mask(KernelContext& ctx, const Tensor& self, const Tensor& mask, int32_t first,
                  IndexPlan* plan, Tensor* storage, int32_t* sizes, uint8_t* orders,
                  int32_t* strides) {
  const int32_t k = mask.dim();
  if (k == 0) return fail(Error::NotSupported, "%s: 0-d bool masks are not supported", kOp);
  if (first + k > self.dim()) {
    return fail(Error::InvalidArgument, "%s: too many indices for a %d-d tensor", kOp, self.dim());
  }
  for (int32_t d = 0; d < k; ++d) {
    if (mask.size(d) != self.size(first + d)) {
      return fail(Error::InvalidArgument,
                  "%s: mask of size %d does not match self's size %d at dim %d", kOp, mask.size(d),
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
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(k > 0 ? k : 1) * 8;
  int64_t* coords = static_cast<int64_t*>(ctx.allocate_scratch(bytes > 0 ? bytes : 8, 8));
  if (coords == nullptr) {
    return fail(Error::OutOfMemory, "%s: needs %zu bytes of scratch for a bool mask", kOp, bytes);
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
    sizes[d] = static_cast<int32_t>(count);
    orders[d] = 0;
    storage[d] =
        Tensor(ScalarType::Long, 1, &sizes[d], &orders[d], &strides[d], coords + d * count);
    plan->index[first + d] = &storage[d];
  }
  return Error::Ok;
}

// Broadcasts B (plan->b_sizes) with t's shape, numpy rules.
Error broadcast_into(IndexPlan* plan, const Tensor& t) {
  const int32_t dim = plan->b_dim > t.dim() ? plan->b_dim : t.dim();
  int32_t merged[kMaxTensorDim];
  for (int32_t i = 0; i < dim; ++i) {
    const int32_t bi = i - (dim - plan->b_dim), ti = i - (dim - t.dim());
    const int32_t bs = bi >= 0 ? plan->b_sizes[bi] : 1, ts = ti >= 0 ? t.size(ti) : 1;
    if (bs != ts && bs != 1 && ts != 1) {
      return fail(Error::InvalidArgument, "%s: index shapes do not broadcast (%d vs %d)", kOp, bs,
                  ts);
    }
    merged[i] = bs == 1 ? ts : bs;
  }
  plan->b_dim = dim;
  for (int32_t i = 0; i < dim; ++i) plan->b_sizes[i] = merged[i];
  return Error::Ok;
}

Error index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TOT"));
  const Tensor& self = *args[0]->tensor;
  const Span<Tensor* const> indices = args[1]->tensor_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));

  IndexPlan plan;
  Tensor mask_storage[kMaxTensorDim];
  int32_t mask_sizes[kMaxTensorDim], mask_strides[kMaxTensorDim];
  uint8_t mask_orders[kMaxTensorDim];
  int32_t d = 0;  // self dim the next entry indexes
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor* t = indices[i];
    if (t != nullptr && (t->dtype() == ScalarType::Bool || t->dtype() == ScalarType::Byte)) {
      PTERON_CHECK(t->dtype() == ScalarType::Bool, Error::NotSupported,
                   "%s: uint8 masks are deprecated; use a bool mask", kOp);
      PTERON_TRY(expand_mask(ctx, self, *t, d, &plan, mask_storage + d, mask_sizes + d,
                             mask_orders + d, mask_strides + d));
      d += t->dim();
      continue;
    }
    PTERON_CHECK(d < self.dim(), Error::InvalidArgument,
                 "%s: too many indices (%zu) for a %d-d tensor", kOp, indices.size(), self.dim());
    if (t != nullptr) {
      PTERON_CHECK(t->dtype() == ScalarType::Long || t->dtype() == ScalarType::Int,
                   Error::NotSupported,
                   "%s: index %zu has dtype %s; supported are int64, int32 "
                   "and bool",
                   kOp, i, scalar_type_name(t->dtype()));
      plan.index[d] = t;
    }
    ++d;
  }

  // Broadcast the index tensors to B; note where the indexed dims sit.
  int32_t first = -1, last = -1, count = 0;
  for (int32_t s = 0; s < self.dim(); ++s) {
    const Tensor* t = plan.index[s];
    if (t == nullptr) continue;
    if (first < 0) first = s;
    last = s;
    ++count;
    PTERON_TRY(broadcast_into(&plan, *t));
    PTERON_TRY(check_indices(kOp, *t, self.size(s), s, true));
  }
  if (count == 0) return copy_tensor(kOp, self, out);  // all ":" (or no indices)
  const bool adjacent = last - first + 1 == count;

  // out = [A dims (slices before B)] [B] [C dims (the remaining slices)].
  int32_t out_sizes[kMaxTensorDim], a_dims[kMaxTensorDim], c_dims[kMaxTensorDim];
  int32_t na = 0, nc = 0;
  for (int32_t s = 0; s < self.dim(); ++s) {
    if (plan.index[s] != nullptr) continue;
    if (adjacent && s < first)
      a_dims[na++] = s;
    else
      c_dims[nc++] = s;
  }
  const int32_t out_dim = na + plan.b_dim + nc;
  PTERON_CHECK(out_dim <= kMaxTensorDim, Error::NotSupported, "%s: result rank %d above %d", kOp,
               out_dim, kMaxTensorDim);
  for (int32_t k = 0; k < na; ++k) out_sizes[k] = self.size(a_dims[k]);
  for (int32_t k = 0; k < plan.b_dim; ++k) out_sizes[na + k] = plan.b_sizes[k];
  for (int32_t k = 0; k < nc; ++k) out_sizes[na + plan.b_dim + k] = self.size(c_dims[k]);
  PTERON_TRY(expect_out_shape(kOp, out, out_sizes, out_dim));
  if (out.numel() == 0) return Error::Ok;

  // The C block every (A, B) position copies, and the walk over (A, B).
  int64_t block[kMaxTensorDim], block_ss[kMaxTensorDim], block_ds[kMaxTensorDim];
  for (int32_t k = 0; k < nc; ++k) {
    block[k] = self.size(c_dims[k]);
    block_ss[k] = self.stride(c_dims[k]);
    block_ds[k] = out.stride(na + plan.b_dim + k);
  }
  const int32_t walk_dim = na + plan.b_dim;
  int64_t walk_size[kMaxTensorDim], walk_out[kMaxTensorDim], walk_self[kMaxTensorDim];
  int64_t walk_idx[kMaxTensorDim][kMaxTensorDim];  // [index tensor][walk dim]
  const Tensor* used[kMaxTensorDim];
  int64_t used_stride[kMaxTensorDim];  // self stride of the dim each index tensor indexes
  int64_t used_size[kMaxTensorDim];
  int32_t nu = 0;
  for (int32_t s = 0; s < self.dim(); ++s) {
    if (plan.index[s] == nullptr) continue;
    used[nu] = plan.index[s];
    used_stride[nu] = self.stride(s);
    used_size[nu++] = self.size(s);
  }
  for (int32_t w = 0; w < walk_dim; ++w) {
    walk_size[w] = out_sizes[w];
    walk_out[w] = out.stride(w);
    walk_self[w] = w < na ? self.stride(a_dims[w]) : 0;
    for (int32_t u = 0; u < nu; ++u) {
      const Tensor& t = *used[u];
      const int32_t bk = w - na;                       // dim of B
      const int32_t tk = bk - (plan.b_dim - t.dim());  // dim of t, right-aligned
      walk_idx[u][w] = (w < na || tk < 0 || t.size(tk) == 1) ? 0 : t.stride(tk);
    }
  }

  const size_t elem = self.element_size();
  int64_t pos[kMaxTensorDim] = {0}, o = 0, s0 = 0, io[kMaxTensorDim] = {0};
  while (true) {
    int64_t src = s0;
    for (int32_t u = 0; u < nu; ++u) {
      int64_t v = load_index(*used[u], io[u]);
      if (v < 0) v += used_size[u];
      src += v * used_stride[u];
    }
    if (nc == 0) {
      __builtin_memcpy(byte_ptr(out, o), byte_ptr(self, src), elem);
    } else {
      strided_copy(byte_ptr(out, o), block_ds, byte_ptr(self, src), block_ss, block, nc,
                   elem);
    }
    int32_t w = walk_dim - 1;
    for (; w >= 0; --w) {
      if (++pos[w] < walk_size[w]) {
        o += walk_out[w];
        s0 += walk_self[w];
        for (int32_t u = 0; u < nu; ++u) io[u] += walk_idx[u][w];
        break;
      }
      o -= walk_out[w] * (walk_size[w] - 1);
      s0 -= walk_self[w] * (walk_size[w] - 1);
      for (int32_t u = 0; u < nu; ++u) io[u] -= walk_idx[u][w] * (walk_size[w] - 1);
      pos[w] = 0;
    }
    if (w < 0) break;
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index.Tensor_out", index_tensor_out);

}  // namespace pteron
