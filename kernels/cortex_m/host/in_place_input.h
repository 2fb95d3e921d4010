// The input a threaded convolution may read. The memory planner may place a convolution's
// output over its own input, a few pixels before it (kernels/cortex_m/in_place.h): safe for a
// walk over the output pixels in order, which the scalar and MVE paths make, but not for the
// host paths' tasks on several threads, where a later pixel's output could overwrite input an
// earlier pixel's task has not read yet. So when the two overlap, the input is first copied to
// scratch and the tasks read the copy; without scratch for it, the work stays on the calling
// thread (`*pool` set to null), in pixel order, which the planner's offset allows.
#pragma once

#include <pthreadpool.h>

#include <cstdint>
#include <cstring>

#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m::host {

inline const int8_t* input_for_threads(KernelContext& ctx, const int8_t* in, int64_t in_bytes,
                                       const int8_t* out, int64_t out_bytes, pthreadpool_t* pool) {
  const bool overlap = in < out + out_bytes && out < in + in_bytes;
  if (!overlap) return in;
  void* copy = ctx.allocate_scratch(static_cast<size_t>(in_bytes), 64);
  if (copy == nullptr) {
    *pool = nullptr;
    return in;
  }
  std::memcpy(copy, in, static_cast<size_t>(in_bytes));
  return static_cast<const int8_t*>(copy);
}

}  // namespace pteron::cortex_m::host
