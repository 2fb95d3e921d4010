// Turns "reduce these dims of `in`" into loops over memory: outer (kept) x reduce x inner (kept),
// with each group's dims merged where memory allows. When the innermost memory dim is kept, a
// reduction adds whole contiguous rows into a row of accumulators (vertical: vectorises across
// outputs); otherwise each output folds contiguous lines (horizontal: vectorises along the
// line). Any dim order in and out: out offsets come from out's own strides.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

struct ReducePlan {
  bool empty_output = false;  // some kept dim has size 0: nothing to compute
  // Kept dims outside the inner run (loop order), with input and out strides (up to 2 outs).
  int32_t outer_dim = 0;
  int64_t outer_size[kMaxTensorDim], outer_in[kMaxTensorDim], outer_out[2][kMaxTensorDim];
  // Reduced dims, loop order; the last is the "line" (contiguous in memory order plans).
  int32_t reduce_dim = 0;
  int64_t reduce_size[kMaxTensorDim], reduce_in[kMaxTensorDim];
  int64_t reduce_count = 1;  // elements folded into each output (0: outputs get the identity)
  // The innermost kept run: `inner` outputs side by side (1 when the innermost dim is reduced).
  int64_t inner = 1, inner_in = 0, inner_out[2] = {0, 0};
};

// Mask of dims to reduce (bit d = dim d) from a dim list; negative dims count from the end.
// Fails, naming `op`, on an out-of-range or repeated dim. An empty list gives mask 0.
Error dims_to_mask(const char* op, const int64_t* dims, size_t count, int32_t rank, uint32_t* mask);

// Checks the outs' shapes (resizing dynamic ones) for reducing `mask` of `in` with `keepdim`,
// then builds the loops. `memory_order` walks `in` in its memory order (fastest); pass false
// when the reduce position must be the logical row-major position (argmax over all dims of a
// non-contiguous tensor).
Error make_reduce_plan(const char* op, const Tensor& in, uint32_t mask, bool keepdim,
                       Tensor* const* outs, int32_t n_outs, bool memory_order, ReducePlan* plan);

// Calls fn(in_offset, out0_offset, out1_offset, count) for each group of up to `chunk` adjacent
// outputs of the inner run (count == 1 when the plan is horizontal), over every outer index.
template <typename Fn>
void for_each_output_chunk(const ReducePlan& p, int64_t chunk, Fn&& fn) {
  if (p.empty_output) return;
  int64_t idx[kMaxTensorDim] = {0};
  int64_t in = 0, o0 = 0, o1 = 0;
  while (true) {
    for (int64_t j = 0; j < p.inner; j += chunk) {
      fn(in + j * p.inner_in, o0 + j * p.inner_out[0], o1 + j * p.inner_out[1],
         p.inner - j < chunk ? p.inner - j : chunk);
    }
    int32_t d = p.outer_dim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < p.outer_size[d]) {
        in += p.outer_in[d];
        o0 += p.outer_out[0][d];
        o1 += p.outer_out[1][d];
        break;
      }
      in -= p.outer_in[d] * (p.outer_size[d] - 1);
      o0 -= p.outer_out[0][d] * (p.outer_size[d] - 1);
      o1 -= p.outer_out[1][d] * (p.outer_size[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls fn(in_offset, length, stride) for each line (run of the last reduce dim) of the reduce
// space starting at `base`, in loop order. Nothing when reduce_count == 0.
template <typename Fn>
void for_each_reduce_line(const ReducePlan& p, int64_t base, Fn&& fn) {
  if (p.reduce_count == 0) return;
  if (p.reduce_dim == 0) {
    fn(base, int64_t{1}, int64_t{0});
    return;
  }
  const int32_t last = p.reduce_dim - 1;
  int64_t idx[kMaxTensorDim] = {0};
  int64_t in = base;
  while (true) {
    fn(in, p.reduce_size[last], p.reduce_in[last]);
    int32_t d = last - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < p.reduce_size[d]) {
        in += p.reduce_in[d];
        break;
      }
      in -= p.reduce_in[d] * (p.reduce_size[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace pteron
