#include "kernels/portable/util/reduce_plan.h"

#include "kernels/portable/util/broadcast.h"

namespace pteron {

Error dims_to_mask(const char* op, const int64_t* dims, size_t count, int32_t rank,
                   uint32_t* mask) {
  *mask = 0;
  for (size_t i = 0; i < count; ++i) {
    int32_t d = 0;
    PTERON_TRY(normalize_dim(op, dims[i], rank, &d));
    if (*mask & (1u << d)) {
      return fail(Error::InvalidArgument, "%s: dim %d appears multiple times in the list of dims",
                  op, d);
    }
    *mask |= 1u << d;
  }
  return Error::Ok;
}

namespace {

struct LoopDim {
  int64_t size, in, out[2];
  bool reduce;
};

}  // namespace

Error make_reduce_plan(const char* op, const Tensor& in, uint32_t mask, bool keepdim,
                       Tensor* const* outs, int32_t n_outs, bool memory_order, ReducePlan* p) {
  const int32_t rank = in.dim();
  if (rank < 32) mask &= (1u << rank) - 1;  // a 0-d tensor "reduces" dim 0 to itself
  int32_t out_sizes[kMaxTensorDim], out_rank = 0, out_dim_of[kMaxTensorDim];
  for (int32_t d = 0; d < rank; ++d) {
    const bool r = (mask >> d) & 1u;
    out_dim_of[d] = r && !keepdim ? -1 : out_rank;
    if (!r)
      out_sizes[out_rank++] = in.size(d);
    else if (keepdim)
      out_sizes[out_rank++] = 1;
  }
  for (int32_t k = 0; k < n_outs; ++k) {
    PTERON_TRY(expect_out_shape(op, *outs[k], out_sizes, out_rank));
  }

  *p = ReducePlan();
  LoopDim dims[kMaxTensorDim];
  int32_t n = 0;
  for (int32_t d = 0; d < rank; ++d) {
    const bool r = (mask >> d) & 1u;
    if (in.size(d) == 0) {
      if (!r) {
        p->empty_output = true;
        return Error::Ok;
      }
      p->reduce_count = 0;
    }
    if (in.size(d) == 1) continue;
    LoopDim ld{in.size(d), in.stride(d), {0, 0}, r};
    for (int32_t k = 0; k < n_outs; ++k) ld.out[k] = r ? 0 : outs[k]->stride(out_dim_of[d]);
    // Memory order: insertion sort by input stride, largest first (stable).
    int32_t i = n++;
    while (memory_order && i > 0 && dims[i - 1].in < ld.in) {
      dims[i] = dims[i - 1];
      --i;
    }
    dims[i] = ld;
  }
  if (p->reduce_count == 0) {  // nothing to fold: keep only the kept dims
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
      if (!dims[i].reduce) dims[m++] = dims[i];
    }
    n = m;
  }
  // Merge neighbours of the same kind that step contiguously on every side.
  int32_t m = 0;
  for (int32_t i = 0; i < n; ++i) {
    LoopDim& prev = dims[m > 0 ? m - 1 : 0];
    const LoopDim& cur = dims[i];
    if (m > 0 && prev.reduce == cur.reduce && prev.in == cur.in * cur.size &&
        prev.out[0] == cur.out[0] * cur.size && prev.out[1] == cur.out[1] * cur.size) {
      prev.size *= cur.size;
      prev.in = cur.in;
      prev.out[0] = cur.out[0];
      prev.out[1] = cur.out[1];
    } else {
      dims[m++] = cur;
    }
  }
  n = m;
  if (n > 0 && !dims[n - 1].reduce) {
    --n;
    p->inner = dims[n].size;
    p->inner_in = dims[n].in;
    p->inner_out[0] = dims[n].out[0];
    p->inner_out[1] = dims[n].out[1];
  }
  for (int32_t i = 0; i < n; ++i) {
    if (dims[i].reduce) {
      p->reduce_size[p->reduce_dim] = dims[i].size;
      p->reduce_in[p->reduce_dim++] = dims[i].in;
      if (p->reduce_count != 0) p->reduce_count *= dims[i].size;
    } else {
      p->outer_size[p->outer_dim] = dims[i].size;
      p->outer_in[p->outer_dim] = dims[i].in;
      p->outer_out[0][p->outer_dim] = dims[i].out[0];
      p->outer_out[1][p->outer_dim++] = dims[i].out[1];
    }
  }
  return Error::Ok;
}

}  // namespace pteron
